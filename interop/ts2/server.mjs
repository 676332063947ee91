// The TypeScript SDK 2.x "everything" server that `interop_client_stateless` drives (revision
// 2026-07-28): @modelcontextprotocol/server 2.4.0 and @modelcontextprotocol/node 2.1.2, as pinned
// in interop/ts2/package.json. It must sit next to those node_modules (ESM imports resolve from
// the script's directory): `cargo xtask interop` copies it to target/interop/ts2/server.mjs.
//   node server.mjs --stdio      serves stdio (serveStdio)
//   PORT=3100 node server.mjs    serves Streamable HTTP at http://localhost:3100/mcp and prints
//                                "listening on http://localhost:3100/mcp" on stderr
// It has every tool, prompt and resource the official conformance suite (0.2.0-alpha.12) asks
// for at 2026-07-28, plus tools that fire list-changed notifications and an x-mcp-header tool.
import { createServer } from 'node:http';
import * as z from 'zod/v4';
import {
    McpServer,
    ResourceTemplate,
    createMcpHandler,
    inputRequired,
    acceptedContent,
    inputResponse,
    createRequestStateCodec,
    completable,
    fromJsonSchema,
    CLIENT_CAPABILITIES_META_KEY
} from '@modelcontextprotocol/server';
import { toNodeHandler, localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import { SkillCatalog, memorySkillFiles } from '@modelcontextprotocol/server/ext/skills';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

// HMAC-protected requestState (createRequestStateCodec needs a >=32 byte key).
const codec = createRequestStateCodec({ key: 'conformance-demo-key-0123456789abcdef-0123456789' });

let handler; // set below; the factory closes over it for the list-changed trigger tools

// A skill (the Skills extension, SEP-2640) that `interop_client_stateless` lists, loads and
// reads with every file verified: the SDK's catalog computes the entries and serves the files.
const skills = await SkillCatalog.load(
    memorySkillFiles({
        'ts-greeting/SKILL.md': '---\nname: ts-greeting\ndescription: Greet from the TypeScript SDK\nmetadata:\n  version: \"2\"\n---\n\n# TS greeting\n\nSee references/NOTE.md.\n',
        'ts-greeting/references/NOTE.md': 'A note from the TypeScript SDK.\n'
    })
);

const nameSchema = z.object({ name: z.string() });

function buildServer() {
    const server = new McpServer(
        { name: 'ts2-everything-server', version: '1.0.0' },
        {
            capabilities: {
                tools: { listChanged: true },
                prompts: { listChanged: true },
                resources: { subscribe: true, listChanged: true },
                completions: {},
                logging: {}
            },
            // verify hook: a tampered/forged state makes the SDK answer -32602 "Invalid or expired requestState"
            requestState: { verify: (state, ctx) => codec.verify(state, ctx) }
        }
    );

    // FIRST tool: http-header-validation calls tools/list[0] with {} and expects success.
    server.registerTool('test_simple_text', { description: 'simple text' }, async () => ({
        content: [{ type: 'text', text: 'This is a simple text response for testing.' }]
    }));
    server.registerTool('test_image_content', { description: 'image' }, async () => ({
        content: [{ type: 'image', data: PNG, mimeType: 'image/png' }]
    }));
    server.registerTool('test_audio_content', { description: 'audio' }, async () => ({
        content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]
    }));
    server.registerTool('test_embedded_resource', { description: 'embedded resource' }, async () => ({
        content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }]
    }));
    server.registerTool('test_multiple_content_types', { description: 'mixed' }, async () => ({
        content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG, mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } }
        ]
    }));
    server.registerTool('test_error_handling', { description: 'error' }, async () => {
        throw new Error('This tool intentionally returns an error for testing');
    });
    server.registerTool('test_tool_with_progress', { description: 'progress', inputSchema: z.object({}) }, async (_a, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken ?? 0;
        for (const progress of [0, 50, 100]) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
            await new Promise(r => setTimeout(r, 50));
        }
        return { content: [{ type: 'text', text: String(progressToken) }] };
    });
    // server-stateless: logs must be suppressed when the request has no _meta logLevel
    server.registerTool('test_logging_tool', { description: 'logs', inputSchema: z.object({}) }, async (_a, ctx) => {
        // ctx.mcpReq.log() honours _meta["io.modelcontextprotocol/logLevel"] (absent => suppressed);
        // a raw ctx.mcpReq.notify({method:'notifications/message'}) would NOT be gated.
        await ctx.mcpReq.log('info', 'hello from test_logging_tool');
        return { content: [{ type: 'text', text: 'logged' }] };
    });
    // server-stateless: -32021 when the client did not declare sampling
    server.registerTool('test_missing_capability', { description: 'needs sampling', inputSchema: z.object({}) }, async (_a, ctx) => {
        const done = inputResponse(ctx.mcpReq.inputResponses, 'sample');
        if (done.kind === 'sampling') return { content: [{ type: 'text', text: 'sampled' }] };
        return inputRequired({ inputRequests: { sample: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 }) } });
    });
    server.registerTool('test_streaming_elicitation', { description: 'elicits', inputSchema: z.object({}) }, async (_a, ctx) => {
        const c = acceptedContent(ctx.mcpReq.inputResponses, 'q');
        if (c) return { content: [{ type: 'text', text: 'ok' }] };
        return inputRequired({ inputRequests: { q: inputRequired.elicit({ message: 'q?', requestedSchema: z.object({ a: z.string() }) }) } });
    });
    server.registerTool('test_trigger_tool_change', { description: 'fires tools list_changed', inputSchema: z.object({}) }, async () => {
        setTimeout(() => (handler ? handler.notify.toolsChanged() : server.sendToolListChanged()), 20);
        return { content: [{ type: 'text', text: 'tools changed' }] };
    });
    server.registerTool('test_trigger_prompt_change', { description: 'fires prompts list_changed', inputSchema: z.object({}) }, async () => {
        setTimeout(() => (handler ? handler.notify.promptsChanged() : server.sendPromptListChanged()), 20);
        return { content: [{ type: 'text', text: 'prompts changed' }] };
    });

    // ---- SEP-2322 multi round-trip (InputRequiredResult) tools ----
    server.registerTool('test_input_required_result_elicitation', { description: 'MRTR elicitation', inputSchema: z.object({}) }, async (_a, ctx) => {
        const got = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', nameSchema);
        if (got) return { content: [{ type: 'text', text: `Hello, ${got.name}!` }] };
        return inputRequired({
            inputRequests: { user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) }
        });
    });
    server.registerTool('test_input_required_result_sampling', { description: 'MRTR sampling', inputSchema: z.object({}) }, async (_a, ctx) => {
        const r = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
        if (r.kind === 'sampling') return { content: [{ type: 'text', text: `model said: ${r.result.content?.text}` }] };
        return inputRequired({
            inputRequests: {
                capital_question: inputRequired.createMessage({
                    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
                    maxTokens: 100
                })
            }
        });
    });
    server.registerTool('test_input_required_result_list_roots', { description: 'MRTR roots', inputSchema: z.object({}) }, async (_a, ctx) => {
        const r = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
        if (r.kind === 'roots') return { content: [{ type: 'text', text: `roots: ${r.roots.map(x => x.uri).join(',')}` }] };
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    });
    server.registerTool('test_input_required_result_request_state', { description: 'MRTR requestState', inputSchema: z.object({}) }, async (_a, ctx) => {
        const st = ctx.mcpReq.requestState(); // already verified+decoded by the verify hook
        const ok = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
        if (st?.round === 1 && ok) return { content: [{ type: 'text', text: 'state-ok' }] };
        return inputRequired({
            inputRequests: {
                confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: z.object({ ok: z.boolean() }) })
            },
            requestState: await codec.mint({ round: 1 }, ctx)
        });
    });
    server.registerTool('test_input_required_result_multiple_inputs', { description: 'MRTR multi', inputSchema: z.object({}) }, async (_a, ctx) => {
        const resp = ctx.mcpReq.inputResponses ?? {};
        if (resp.user_name && resp.greeting && resp.client_roots) return { content: [{ type: 'text', text: 'all inputs received' }] };
        return inputRequired({
            inputRequests: {
                user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }),
                greeting: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }),
                client_roots: inputRequired.listRoots()
            },
            requestState: await codec.mint({ round: 1 }, ctx)
        });
    });
    server.registerTool('test_input_required_result_multi_round', { description: 'MRTR 3 rounds', inputSchema: z.object({}) }, async (_a, ctx) => {
        const st = ctx.mcpReq.requestState();
        if (st?.step === 2 && acceptedContent(ctx.mcpReq.inputResponses, 'step2'))
            return { content: [{ type: 'text', text: `done: ${st.name} likes ${acceptedContent(ctx.mcpReq.inputResponses, 'step2').color}` }] };
        const s1 = acceptedContent(ctx.mcpReq.inputResponses, 'step1', nameSchema);
        if (st?.step === 1 && s1)
            return inputRequired({
                inputRequests: { step2: inputRequired.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema: z.object({ color: z.string() }) }) },
                requestState: await codec.mint({ step: 2, name: s1.name }, ctx)
            });
        return inputRequired({
            inputRequests: { step1: inputRequired.elicit({ message: 'Step 1: What is your name?', requestedSchema: nameSchema }) },
            requestState: await codec.mint({ step: 1 }, ctx)
        });
    });
    server.registerTool('test_input_required_result_tampered_state', { description: 'MRTR HMAC', inputSchema: z.object({}) }, async (_a, ctx) => {
        if (ctx.mcpReq.requestState() && acceptedContent(ctx.mcpReq.inputResponses, 'confirm')) return { content: [{ type: 'text', text: 'state verified' }] };
        return inputRequired({
            inputRequests: { confirm: inputRequired.elicit({ message: 'Confirm', requestedSchema: z.object({ ok: z.boolean() }) }) },
            requestState: await codec.mint({ t: 1 }, ctx)
        });
    });
    server.registerTool('test_input_required_result_capabilities', { description: 'MRTR caps', inputSchema: z.object({}) }, async (_a, ctx) => {
        if (ctx.mcpReq.inputResponses) return { content: [{ type: 'text', text: 'done' }] };
        const caps = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {};
        const reqs = {};
        if (caps.sampling) reqs.s = inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'x' } }], maxTokens: 5 });
        if (caps.elicitation) reqs.e = inputRequired.elicit({ message: 'x', requestedSchema: z.object({ a: z.string() }) });
        if (caps.roots) reqs.r = inputRequired.listRoots();
        if (Object.keys(reqs).length === 0) return { content: [{ type: 'text', text: 'no capabilities' }] };
        return inputRequired({ inputRequests: reqs });
    });

    // JSON Schema 2020-12 preservation (pending scenario) - raw JSON schema via fromJsonSchema
    server.registerTool(
        'json_schema_2020_12_tool',
        {
            description: 'Tool with JSON Schema 2020-12 features',
            inputSchema: fromJsonSchema({
                $schema: 'https://json-schema.org/draft/2020-12/schema',
                type: 'object',
                $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
                properties: {
                    name: { type: 'string' },
                    address: { $ref: '#/$defs/address' },
                    contactMethod: { type: 'string', enum: ['phone', 'email'] },
                    phone: { type: 'string' },
                    email: { type: 'string' }
                },
                allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
                if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
                then: { required: ['phone'] },
                else: { required: ['email'] },
                additionalProperties: false
            })
        },
        async () => ({ content: [{ type: 'text', text: 'ok' }] })
    );
    // SEP-2243 custom header (x-mcp-header) tool (pending scenario http-custom-header-server-validation)
    server.registerTool(
        'test_region_header',
        {
            description: 'mirrors region into Mcp-Param-Region',
            inputSchema: fromJsonSchema({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] })
        },
        async ({ region }) => ({ content: [{ type: 'text', text: `region=${region}` }] })
    );

    // ---- prompts ----
    server.registerPrompt('test_simple_prompt', { description: 'simple' }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]
    }));
    server.registerPrompt(
        'test_prompt_with_arguments',
        {
            description: 'args',
            argsSchema: z.object({
                arg1: completable(z.string().describe('First test argument'), v => ['paris', 'park', 'party'].filter(x => x.startsWith(v ?? ''))),
                arg2: z.string().describe('Second test argument')
            })
        },
        ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] })
    );
    server.registerPrompt('test_prompt_with_embedded_resource', { description: 'embedded', argsSchema: z.object({ resourceUri: z.string() }) }, ({ resourceUri }) => ({
        messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } }
        ]
    }));
    server.registerPrompt('test_prompt_with_image', { description: 'image' }, () => ({
        messages: [
            { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } }
        ]
    }));
    server.registerPrompt('test_input_required_result_prompt', { description: 'MRTR prompt' }, (ctx) => {
        const c = acceptedContent(ctx.mcpReq.inputResponses, 'user_context');
        if (c) return { messages: [{ role: 'user', content: { type: 'text', text: `context: ${c.context}` } }] };
        return inputRequired({
            inputRequests: {
                user_context: inputRequired.elicit({ message: 'What context should the prompt use?', requestedSchema: z.object({ context: z.string() }) })
            }
        });
    });

    // ---- resources ----
    server.registerResource('static-text', 'test://static-text', { description: 'text', mimeType: 'text/plain' }, async uri => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }]
    }));
    server.registerResource('static-binary', 'test://static-binary', { description: 'png', mimeType: 'image/png' }, async uri => ({
        contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }]
    }));
    server.registerResource(
        'template',
        new ResourceTemplate('test://template/{id}/data', { list: undefined }),
        { description: 'template', mimeType: 'application/json' },
        async (uri, { id }) => ({
            contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }]
        })
    );
    skills.attach(server);
    return server;
}

if (process.argv.includes('--stdio')) {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(() => buildServer(), { onerror: e => process.stderr.write(`onerror: ${e.message}\n`) });
} else {
    const port = Number(process.env.PORT ?? 3100);
    handler = createMcpHandler(() => buildServer(), {
        onerror: e => process.env.VERBOSE && console.error('[onerror]', e.message)
    });
    const node = toNodeHandler(handler);
    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();
    createServer(async (req, res) => {
        if (!validateHost(req, res) || !validateOrigin(req, res)) return;
        if (new URL(req.url, 'http://x').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        await node(req, res);
    }).listen(port, '127.0.0.1', () => console.error(`listening on http://localhost:${port}/mcp`));
}
