// A real OpenID provider (the npm package `oidc-provider`) for the end-to-end authorization
// run (`cargo xtask auth-e2e`): the authorization server our MCP servers trust and our
// client, and the official SDK clients, authorize with.
//
//   node provider.mjs --port PORT [--resource URL]... [--access-ttl SECONDS]
//
// - Dynamic Client Registration is open (a registration's `scope` is dropped, see below); PKCE
//   is required; its scopes are `openid`, `offline_access`, `mcp:read` and `mcp:write`, and
//   each `--resource` is a resource server (RFC 8707) with the scopes `mcp:read mcp:write`,
//   given JWT access tokens (RFC 9068) for it alone, valid for `--access-ttl` seconds
//   (default 3600). Refresh tokens go to clients granted `offline_access`.
// - Nobody is at the browser: `/interaction/:uid` signs in the account `alice` and grants
//   whatever the client asked for, then sends the browser on. A client only has to follow the
//   redirects (keeping cookies) to get back its code.
// - Prints `listening on <issuer>` once it accepts connections.

import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

function parseArgs(argv) {
  const args = { port: 0, resources: [], accessTtl: 3600 };
  for (let i = 0; i < argv.length; i += 1) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      i += 1;
      return argv[i];
    };
    switch (argv[i]) {
      case '--port': args.port = Number(value()); break;
      case '--resource': args.resources.push(value()); break;
      case '--access-ttl': args.accessTtl = Number(value()); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!args.port) throw new Error('usage: provider.mjs --port PORT [--resource URL]... [--access-ttl SECONDS]');
  return args;
}

const args = parseArgs(process.argv.slice(2));
const issuer = `http://127.0.0.1:${args.port}`;
const RESOURCE_SCOPES = 'mcp:read mcp:write';

// A fresh signing key each run: the resource servers fetch it from jwks_uri.
const key = (type, options, alg) => ({
  ...generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
  kid: `${alg.toLowerCase()}-key`,
  alg,
  use: 'sig',
});
const jwks = { keys: [key('rsa', { modulusLength: 2048 }, 'RS256'), key('ec', { namedCurve: 'P-256' }, 'ES256')] };

const provider = new Provider(issuer, {
  jwks,
  // The resource scopes too: the official SDKs put the scopes they will ask for in their
  // registration, and the provider refuses a registration naming scopes it does not know.
  scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
  claims: { openid: ['sub'] },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  pkce: { required: () => true },
  clientDefaults: { grant_types: ['authorization_code', 'refresh_token'] },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A request without `resource` gets no JWT for any resource server.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (!args.resources.includes(resource)) throw new errors.InvalidTarget(`unknown resource ${resource}`);
        return {
          scope: RESOURCE_SCOPES,
          audience: resource,
          accessTokenTTL: args.accessTtl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  // Refresh tokens for clients that asked for offline_access (the default rule), rotated.
  rotateRefreshToken: true,
});

// Registrations forget their `scope`. The official SDKs register with the scopes of the first
// challenge, and the provider would hold them to those, refusing their step-up to more
// (`invalid_scope`); our client registers without `scope`.
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/reg' && ctx.is('application/json')) {
    const chunks = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += chunk.length;
      if (size > 64 * 1024) ctx.throw(413);
      chunks.push(chunk);
    }
    const metadata = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    if (metadata.scope !== undefined) {
      console.error(`provider: registration scope "${metadata.scope}" dropped`);
      delete metadata.scope;
    }
    // oidc-provider reads a body parsed upstream from here.
    ctx.request.body = metadata;
  }
  return next();
});

// The interaction pages: sign `alice` in, then grant every scope and resource asked for.
provider.use(async (ctx, next) => {
  const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!match || ctx.method !== 'GET') return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  console.error(`provider: interaction ${prompt.name} of ${params.client_id} for scope "${params.scope ?? ''}"`);
  if (prompt.name === 'login') {
    result = { login: { accountId: 'alice' } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
  ctx.status = 303;
  ctx.redirect(to);
});

provider.on('server_error', (_ctx, error) => console.error('provider error:', error));
provider.listen(args.port, '127.0.0.1', () => console.error(`listening on ${issuer}`));
