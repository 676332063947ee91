// Drives an MCP server with the official TypeScript SDK client and runs the checks of
// ./checks.mjs against it (./everything_checks.mjs with MCP_INTEROP_CHECKS=server-everything,
// for the official server-everything), one `ok - ...` / `not ok - ...` line each, then
// `N passed, M failed`.
//
//   node client.mjs <server command> [server args...]   (stdio: spawns the server)
//   node client.mjs --http <url>                          (Streamable HTTP)
//   node client.mjs --sse <url>                           (HTTP+SSE)
//
// Exit code 0 only if every check passed. Run by `cargo xtask interop`, which installs the SDK
// next to a copy of this file (see ../README.md).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js';

const CHECKS = process.env.MCP_INTEROP_CHECKS;
const { checks } =
  CHECKS === 'server-everything'
    ? await import('./everything_checks.mjs')
    : CHECKS === 'gateway'
      ? await import('./gateway_checks.mjs')
      : await import('./checks.mjs');
// Through the gateway, a mounted server's sampling request reaches this client, which answers
// it (declared only then: the other checks see a client without sampling).
const SAMPLING = CHECKS === 'gateway';

// A hung check fails on its own instead of eating the whole run's time budget (the xtask kills
// the run after 60 s), so the checks after it still report.
const CHECK_TIMEOUT_MS = 10_000;

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error) {
  if (error instanceof Error) {
    return error.message
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .join(' | ');
  }
  return String(error);
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error('usage: node client.mjs <server command> [server args...]');
    process.exit(2);
  }

  let transport;
  if (command === '--http') {
    transport = new StreamableHTTPClientTransport(new URL(args[0]));
  } else if (command === '--sse') {
    transport = new SSEClientTransport(new URL(args[0]));
  } else {
    transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
  }
  // The client tells the transport the negotiated revision through this optional hook (HTTP
  // transports need it for their headers, so it is kept); it is our way to observe it.
  const ctx = { offeredVersion: LATEST_PROTOCOL_VERSION, negotiatedVersion: undefined };
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    ctx.negotiatedVersion = version;
    setProtocolVersion?.(version);
  };
  // Elicitation in both modes: URL requests are accepted (the user "opens" the page), forms
  // declined; each request is kept in `ctx.elicitations`, each completion
  // (`notifications/elicitation/complete`) awaited with `ctx.waitForCompletion(id)`.
  ctx.client = new Client(
    { name: 'mcp-rust-sdk-interop', version: '0.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} }, ...(SAMPLING ? { sampling: {} } : {}) } },
  );
  if (SAMPLING) {
    ctx.client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled by the interop client' },
      model: 'interop',
    }));
  }
  ctx.elicitations = [];
  const completed = new Set();
  let wake = () => {};
  ctx.waitForCompletion = (id) =>
    new Promise((resolve) => {
      const poll = () => (completed.has(id) ? resolve() : (wake = poll));
      poll();
    });
  ctx.client.setRequestHandler(ElicitRequestSchema, (request) => {
    ctx.elicitations.push(request.params);
    return { action: request.params.mode === 'url' ? 'accept' : 'decline' };
  });
  ctx.client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.add(notification.params.elicitationId);
    wake();
  });

  let passed = 0;
  let failed = 0;
  let connectError;
  try {
    await withTimeout(ctx.client.connect(transport), CHECK_TIMEOUT_MS);
  } catch (error) {
    connectError = error;
  }
  if (connectError) {
    console.log(`not ok - initialize handshake: ${describe(connectError)}`);
    failed += 1;
  }

  for (const check of checks) {
    if (connectError) {
      console.log(`not ok - ${check.name} # not run: no connection`);
      failed += 1;
      continue;
    }
    try {
      const note = await withTimeout(Promise.resolve().then(() => check.run(ctx)), CHECK_TIMEOUT_MS);
      console.log(`ok - ${check.name}${note ? ` (${note})` : ''}`);
      passed += 1;
    } catch (error) {
      console.log(`not ok - ${check.name}: ${describe(error)}`);
      failed += 1;
    }
  }

  // Closing the transport ends the server (stdin closed, then signals); bounded so that a
  // server ignoring all of it cannot keep this process alive.
  await withTimeout(ctx.client.close(), CHECK_TIMEOUT_MS).catch((error) => {
    console.log(`# close: ${describe(error)}`);
  });

  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

main().catch((error) => {
  console.log(`not ok - harness: ${describe(error)}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
