// The benchmark echo server on the official TypeScript SDK 2.x (@modelcontextprotocol/server 2.4.0
// and @modelcontextprotocol/node 2.1.2, as pinned in interop/ts2/package.json): one tool `echo`
// ({"text": string} in, the same text out as one text content block), with the command line of
// our `examples/echo.rs`:
//   node bench_echo.mjs --stdio                    stdio (serveStdio: 2025 handshake or 2026-07-28)
//   node bench_echo.mjs --http ADDR                Streamable HTTP at http://ADDR/mcp: 2025-era
//                                                  traffic with sessions (one server + transport per
//                                                  session), SSE responses to POSTs
//   node bench_echo.mjs --http ADDR --stateless    2025-era traffic without sessions, JSON responses
//                                                  (a fresh server + transport per request)
// In both HTTP modes, requests of revision 2026-07-28 (no sessions, a `_meta` envelope on every
// request) go to the SDK's createMcpHandler, which answers them with JSON unless the handler
// sends something before its result. The split follows the SDK's documented pattern for keeping a
// hand-wired 2025 deployment next to the 2026-07-28 entry: isLegacyRequest in front of
// createMcpHandler(factory, { legacy: 'reject' }).
// Once bound it prints `listening on http://ADDR/mcp` to stderr; nothing is printed per request.
// It must sit next to its node_modules (ESM imports resolve from the script's directory):
// `cargo xtask interop` copies it to target/interop/ts2/bench_echo.mjs.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { McpServer, createMcpHandler, isInitializeRequest, isJsonContentType, isLegacyRequest } from '@modelcontextprotocol/server';
import {
    NodeStreamableHTTPServerTransport,
    localhostHostValidation,
    localhostOriginValidation,
    toNodeHandler,
    toWebRequest
} from '@modelcontextprotocol/node';

function buildServer() {
    const server = new McpServer({ name: 'bench-echo-ts2', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Echoes the text back', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    return server;
}

const args = process.argv.slice(2);
const httpAt = args.indexOf('--http');
if (args.includes('--stdio')) {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(() => buildServer());
} else if (httpAt >= 0 && args[httpAt + 1]) {
    const addr = args[httpAt + 1];
    const colon = addr.lastIndexOf(':');
    const host = addr.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    const port = Number(addr.slice(colon + 1));
    const stateless = args.includes('--stateless');

    const jsonRpcError = (res, status, code, message) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(
            JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })
        );
    };

    // 2026-07-28: a fresh server per request, from the same factory.
    const modern = toNodeHandler(createMcpHandler(() => buildServer(), { legacy: 'reject' }));

    // 2025-era, with sessions: one transport (and server) per session, found by its Mcp-Session-Id.
    const sessions = new Map();
    const legacySessions = async (req, res, body) => {
        const sessionId = req.headers['mcp-session-id'];
        if (sessionId !== undefined) {
            const transport = sessions.get(sessionId);
            if (!transport) return jsonRpcError(res, 404, -32001, 'Session not found');
            return transport.handleRequest(req, res, body);
        }
        if (req.method !== 'POST' || !isInitializeRequest(body)) {
            return jsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
        }
        const transport = new NodeStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: id => sessions.set(id, transport)
        });
        transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
        await transport.handleRequest(req, res, body);
    };

    // 2025-era, stateless: a fresh server and transport per request, JSON responses.
    const legacyStateless = async (req, res, body) => {
        if (req.method !== 'POST') return jsonRpcError(res, 405, -32000, 'Method not allowed.');
        const server = buildServer();
        const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
            transport.close();
            server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
    };
    const legacy = stateless ? legacyStateless : legacySessions;

    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();
    const http = createServer(async (req, res) => {
        try {
            if (!validateHost(req, res) || !validateOrigin(req, res)) return;
            if (req.url !== '/mcp' && !req.url.startsWith('/mcp?')) return res.writeHead(404).end();
            // Read and parse the body once; both legs take it pre-parsed.
            let body;
            if (req.method === 'POST') {
                if (!isJsonContentType(req.headers['content-type'])) {
                    return jsonRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
                }
                const chunks = [];
                for await (const chunk of req) chunks.push(chunk);
                try {
                    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
                } catch {
                    return jsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
                }
            }
            const probe = await toWebRequest(req, body);
            if (await isLegacyRequest(probe, body)) await legacy(req, res, body);
            else await modern(req, res, body);
        } catch (e) {
            if (!res.headersSent) jsonRpcError(res, 500, -32603, `Internal error: ${e.message}`);
        }
    });
    http.listen(port, host, () => {
        const { address, port: bound } = http.address();
        const shown = address.includes(':') ? `[${address}]` : address;
        process.stderr.write(`listening on http://${shown}:${bound}/mcp\n`);
    });
} else {
    process.stderr.write('usage: bench_echo.mjs --stdio | --http ADDR [--stateless]\n');
    process.exit(2);
}
