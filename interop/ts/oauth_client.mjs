// The official TypeScript SDK's OAuth client against our resource server (the `auth_server`
// example, behind a real OpenID provider), run by `cargo xtask auth-e2e`:
//
//   node oauth_client.mjs http://127.0.0.1:PORT/mcp
//
// The SDK does the protocol: on our 401 it reads our protected resource metadata (RFC 9728),
// the provider's metadata, registers (DCR), and sends the user to the authorization URL with
// PKCE and `resource`; `finishAuth` exchanges the code. The user's part is played by
// `redirectToAuthorization`: it follows the provider's redirects (keeping its cookies) until
// the redirect URI, and keeps the code. Prints `ok - ..`/`not ok - ..` per check and
// `N passed, M failed`; exits with 0 only if none failed.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const CHECK_TIMEOUT_MS = 15_000;
// Never listened on: the headless browser stops when it is redirected there.
const REDIRECT = 'http://127.0.0.1:9/callback';

const server = new URL(process.argv[2] ?? '');
const text = (content) => content.filter((c) => c.type === 'text').map((c) => c.text).join('');

/** An OAuthClientProvider whose user agrees to everything, at once. */
class HeadlessProvider {
  visits = 0;
  cookies = new Map();
  code = undefined;
  authorizationUrl = undefined;

  get redirectUrl() {
    return REDIRECT;
  }

  get clientMetadata() {
    return {
      client_name: 'mcp-interop-ts-oauth',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  }

  state() {
    this.expectedState = randomUUID();
    return this.expectedState;
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information) {
    this.client = information;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens) {
    this.savedTokens = tokens;
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  /** The browser: follows redirects, keeping cookies, until the redirect URI. */
  async redirectToAuthorization(url) {
    this.visits += 1;
    this.authorizationUrl = new URL(url);
    let next = new URL(url);
    for (let hop = 0; hop < 20; hop += 1) {
      if (next.href.startsWith(REDIRECT)) {
        assert.equal(next.searchParams.get('state'), this.expectedState, `state in ${next}`);
        this.code = next.searchParams.get('code');
        assert.ok(this.code, `no code in ${next}`);
        return;
      }
      const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const response = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair.indexOf('=');
        this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1));
      }
      const location = response.headers.get('location');
      if (!location) {
        throw new Error(`${next} answered ${response.status} without a redirect: ${(await response.text()).slice(0, 300)}`);
      }
      next = new URL(location, next);
    }
    throw new Error('more than 20 redirects');
  }
}

const provider = new HeadlessProvider();
const transport = () => new StreamableHTTPClientTransport(server, { authProvider: provider });
const newClient = () => new Client({ name: 'mcp-interop-ts-oauth', version: '0.0.0' });
const ctx = { client: undefined, transport: undefined };

const checks = [
  {
    name: 'the first connect is refused (401): the SDK finds our metadata, registers, sends the user to authorize',
    run: async () => {
      const first = newClient();
      await assert.rejects(first.connect(transport()), UnauthorizedError);
      assert.equal(provider.visits, 1, 'authorizations');
      assert.ok(provider.client?.client_id, 'no client registered');
      const params = provider.authorizationUrl.searchParams;
      assert.equal(params.get('resource'), server.href, 'resource');
      assert.equal(params.get('code_challenge_method'), 'S256');
      assert.ok(params.get('scope')?.split(' ').includes('mcp:read'), `scope ${params.get('scope')}`);
      return `client ${provider.client.client_id}, scope ${params.get('scope')}`;
    },
  },
  {
    name: 'finishAuth exchanges the code for a token (PKCE, resource)',
    run: async () => {
      const t = transport();
      await t.finishAuth(provider.code);
      assert.ok(provider.tokens()?.access_token, 'no access token');
      return `token_type ${provider.tokens().token_type}`;
    },
  },
  {
    name: 'with the token: connect, tools/list, tools/call add',
    run: async () => {
      ctx.client = newClient();
      ctx.transport = transport();
      await ctx.client.connect(ctx.transport);
      const { tools } = await ctx.client.listTools();
      assert.ok(tools.some((t) => t.name === 'add'), 'no add tool');
      const result = await ctx.client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      assert.ok(!result.isError, JSON.stringify(result));
      assert.deepEqual(result.structuredContent, { result: 5 });
      return `${tools.length} tools, ${ctx.transport.protocolVersion ?? 'version ?'}`;
    },
  },
  {
    name: '403 insufficient_scope on count_down: the SDK asks for mcp:read mcp:write, the call then succeeds',
    run: async () => {
      const call = () => ctx.client.callTool({ name: 'count_down', arguments: { from: 2 } });
      await assert.rejects(call(), UnauthorizedError);
      assert.equal(provider.visits, 2, 'authorizations');
      const scope = provider.authorizationUrl.searchParams.get('scope')?.split(' ') ?? [];
      assert.ok(scope.includes('mcp:write') && scope.includes('mcp:read'), `scope ${scope}`);
      await ctx.transport.finishAuth(provider.code);
      const result = await call();
      assert.ok(!result.isError, JSON.stringify(result));
      assert.equal(text(result.content), 'counted down from 2');
    },
  },
  {
    name: 'a tampered token is refused (401) and the SDK authorizes anew',
    run: async () => {
      const tokens = provider.tokens();
      const [head, payload, signature] = tokens.access_token.split('.');
      const flipped = signature.startsWith('A') ? 'B' : 'A';
      provider.saveTokens({ ...tokens, access_token: `${head}.${payload}.${flipped}${signature.slice(1)}` });
      const fresh = newClient();
      await assert.rejects(fresh.connect(transport()), UnauthorizedError);
      assert.equal(provider.visits, 3, 'authorizations');
    },
  },
];

let passed = 0;
let failed = 0;
for (const check of checks) {
  try {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no outcome within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    });
    const note = await Promise.race([check.run(), timeout]).finally(() => clearTimeout(timer));
    console.log(`ok - ${check.name}${note ? ` (${note})` : ''}`);
    passed += 1;
  } catch (error) {
    console.log(`not ok - ${check.name}: ${String(error?.stack ?? error).split('\n').slice(0, 3).join(' | ')}`);
    failed += 1;
  }
}
await ctx.client?.close().catch(() => {});
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
