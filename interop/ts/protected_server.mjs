// An MCP server written with the official TypeScript SDK (1.x), protected by the SDK's own
// resource-server pieces, for `cargo xtask auth-e2e`: our OAuth client (the `oauth_e2e`
// example) authorizes against it through the real OpenID provider (`../oidc/provider.mjs`).
//
//   node protected_server.mjs --port PORT --issuer URL [--scope SCOPE]... [--write-scope SCOPE]
//
// - `McpServer` with the tools `add` (read-only) and `count_down`, over Streamable HTTP with
//   sessions (`StreamableHTTPServerTransport`), on the SDK's express app
//   (`createMcpExpressApp`: DNS rebinding protection on loopback).
// - Every request to `/mcp` goes through `requireBearerAuth` with `requiredScopes` the
//   `--scope`s, `expectedResource` this server's URL and `resourceMetadataUrl` its protected
//   resource metadata, which `mcpAuthMetadataRouter` serves (RFC 9728; the authorization
//   server's metadata, fetched from the issuer's OpenID Connect discovery, beside it). A call of
//   `count_down` also goes through a second `requireBearerAuth` that requires `--write-scope`
//   as well: its 403 `insufficient_scope` makes a client step up, as `auth_server` does.
// - The token verifier checks the JWT access token (RFC 9068) with `jose` against the issuer's
//   JWKS: signature, `typ: at+jwt`, `iss`, `aud` (this server's URL) and `exp`. Any failure is
//   the SDK's `InvalidTokenError`, answered 401 `invalid_token`.
// - Prints `listening on <resource>` once it accepts connections.

import { randomUUID } from 'node:crypto';

import { createRemoteJWKSet, jwtVerify } from 'jose';
import { z } from 'zod';

import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** The tools that change something: they need the write scope. */
const WRITE_TOOLS = new Set(['count_down']);
/** At most this many sessions at once; the oldest is closed to make room. */
const MAX_SESSIONS = 100;

function parseArgs(argv) {
  const args = { port: 0, issuer: '', scopes: [], writeScope: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      i += 1;
      return argv[i];
    };
    switch (argv[i]) {
      case '--port': args.port = Number(value()); break;
      case '--issuer': args.issuer = value(); break;
      case '--scope': args.scopes.push(value()); break;
      case '--write-scope': args.writeScope = value(); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!args.port || !args.issuer) {
    throw new Error('usage: protected_server.mjs --port PORT --issuer URL [--scope SCOPE]... [--write-scope SCOPE]');
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const resource = new URL(`http://127.0.0.1:${args.port}/mcp`);

// The authorization server's metadata: its `jwks_uri`, and what the metadata router serves.
const discovery = new URL('/.well-known/openid-configuration', args.issuer);
const response = await fetch(discovery, { signal: AbortSignal.timeout(10_000) });
if (!response.ok) throw new Error(`${discovery} answered ${response.status}`);
const oauthMetadata = await response.json();
if (oauthMetadata.issuer !== args.issuer) {
  throw new Error(`${discovery} names the issuer ${oauthMetadata.issuer}, not ${args.issuer}`);
}
const jwks = createRemoteJWKSet(new URL(oauthMetadata.jwks_uri));

/** An `OAuthTokenVerifier`: a JWT access token of the issuer, for this server. */
const verifier = {
  async verifyAccessToken(token) {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: args.issuer,
        audience: resource.href,
        typ: 'at+jwt',
        algorithms: ['ES256', 'RS256'],
        requiredClaims: ['exp', 'client_id'],
      }));
    } catch (error) {
      // The code only: the message goes into WWW-Authenticate, quoted.
      console.error(`ts protected server: token refused (${error?.code ?? error})`);
      throw new InvalidTokenError(`the access token is not valid here (${error?.code ?? 'unreadable'})`);
    }
    return {
      token,
      clientId: payload.client_id,
      scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
      expiresAt: payload.exp,
      // `jwtVerify` found this server among the audiences.
      resource,
      extra: { sub: payload.sub },
    };
  },
};

const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
const scopesSupported = [...args.scopes, ...(args.writeScope ? [args.writeScope] : [])];
const readAuth = requireBearerAuth({
  verifier,
  requiredScopes: args.scopes,
  resourceMetadataUrl,
  expectedResource: resource,
});
const writeAuth = requireBearerAuth({
  verifier,
  requiredScopes: scopesSupported,
  resourceMetadataUrl,
  expectedResource: resource,
});
/** `writeAuth` for the calls of the write tools, nothing more for the rest. */
const writeAuthForWriteTools = (req, res, next) => {
  const messages = [req.body].flat();
  const writes = messages.some((m) => m?.method === 'tools/call' && WRITE_TOOLS.has(m.params?.name));
  return writes && args.writeScope ? writeAuth(req, res, next) : next();
};

function mcpServer() {
  const server = new McpServer({ name: 'ts-protected-server', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { result: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => {
      const structuredContent = { result: a + b };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  server.registerTool(
    'count_down',
    {
      description: 'Counts down to zero (needs the write scope)',
      inputSchema: { from: z.number().int().min(0).max(10) },
      annotations: { readOnlyHint: false },
    },
    async ({ from }) => ({ content: [{ type: 'text', text: `counted down from ${from}` }] }),
  );
  return server;
}

/** The transports of the open sessions, by session id, oldest first. */
const sessions = new Map();

const app = createMcpExpressApp({ host: '127.0.0.1' });
app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: resource, scopesSupported, resourceName: 'TypeScript SDK protected server' }));

app.post('/mcp', readAuth, writeAuthForWriteTools, async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    if (id !== undefined || !isInitializeRequest(req.body)) {
      res.status(id === undefined ? 400 : 404).json({
        jsonrpc: '2.0',
        error: { code: -32000, message: id === undefined ? 'Bad Request: no session' : 'Session not found' },
        id: null,
      });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        if (sessions.size >= MAX_SESSIONS) {
          const [oldest] = sessions.values();
          oldest.close().catch(() => {});
        }
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await mcpServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

/** GET (the stream of server messages) and DELETE (the end of a session). */
const sessionRequest = async (req, res) => {
  const id = req.headers['mcp-session-id'];
  const transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    res.status(id === undefined ? 400 : 404).send(id === undefined ? 'no session' : 'session not found');
    return;
  }
  await transport.handleRequest(req, res);
};
app.get('/mcp', readAuth, sessionRequest);
app.delete('/mcp', readAuth, sessionRequest);

app.listen(args.port, '127.0.0.1', (error) => {
  if (error) throw error;
  console.error(`listening on ${resource.href}`);
});
