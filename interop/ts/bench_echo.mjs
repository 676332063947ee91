// The benchmark echo server on the official TypeScript SDK 1.x (@modelcontextprotocol/sdk, as
// pinned in interop/ts/package.json): one tool `echo` ({"text": string} in, the same text out as
// one text content block), with the command line of our `examples/echo.rs`:
//   node bench_echo.mjs --stdio                        stdio
//   node bench_echo.mjs --http ADDR                    Streamable HTTP at http://ADDR/mcp, with
//                                                      sessions (one server + transport per session)
//                                                      and SSE responses to POSTs
//   node bench_echo.mjs --http ADDR --stateless        no sessions, JSON responses (a fresh server +
//                                                      transport per request, as the SDK requires)
// Once bound it prints `listening on http://ADDR/mcp` to stderr; nothing is printed per request.
// It must sit next to its node_modules (ESM imports resolve from the script's directory):
// `cargo xtask interop` copies it to target/interop/ts/bench_echo.mjs.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

function buildServer() {
    const server = new McpServer({ name: 'bench-echo-ts', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Echoes the text back', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    return server;
}

const args = process.argv.slice(2);
const httpAt = args.indexOf('--http');
if (args.includes('--stdio')) {
    await buildServer().connect(new StdioServerTransport());
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
    // Reads and parses a POST body (the transport takes it pre-parsed); a body that is not JSON
    // is answered here with a parse error, and undefined returned.
    const readJson = async (req, res) => {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        try {
            return JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
            jsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
            return undefined;
        }
    };

    // Sessions: one transport (and server) per session, found by its Mcp-Session-Id.
    const sessions = new Map();
    const handleSessions = async (req, res) => {
        const sessionId = req.headers['mcp-session-id'];
        if (sessionId !== undefined) {
            const transport = sessions.get(sessionId);
            if (!transport) return jsonRpcError(res, 404, -32001, 'Session not found');
            if (req.method !== 'POST') return transport.handleRequest(req, res);
            const body = await readJson(req, res);
            if (body !== undefined) await transport.handleRequest(req, res, body);
            return;
        }
        if (req.method !== 'POST') return jsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
        const body = await readJson(req, res);
        if (body === undefined) return;
        if (!isInitializeRequest(body)) return jsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
        const transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: id => sessions.set(id, transport)
        });
        transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
        await transport.handleRequest(req, res, body);
    };

    // Stateless: a fresh server and transport per request (a stateless transport serves one).
    const handleStateless = async (req, res) => {
        if (req.method !== 'POST') return jsonRpcError(res, 405, -32000, 'Method not allowed.');
        const body = await readJson(req, res);
        if (body === undefined) return;
        const server = buildServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
            transport.close();
            server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
    };

    const handle = stateless ? handleStateless : handleSessions;
    const http = createServer(async (req, res) => {
        if (req.url !== '/mcp' && !req.url.startsWith('/mcp?')) return res.writeHead(404).end();
        try {
            await handle(req, res);
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
