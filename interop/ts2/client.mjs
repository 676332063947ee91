// Drives one of our servers with the official TypeScript SDK 2.x client pinned to revision
// 2026-07-28 (no handshake: server/discover, per-request _meta, multi round-trip requests), one
// `ok - ...` / `not ok - ...` line per check, then `N passed, M failed`.
//
//   node client.mjs --http <url>                        (Streamable HTTP)
//   node client.mjs <server command> [server args...]   (stdio: spawns the server)
//
// Exit code 0 only if every check passed. Run by `cargo xtask interop` against the showcase
// servers (`http_server`, `stdio_server`).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';

const CHECK_TIMEOUT_MS = 10_000;

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error) {
  return error instanceof Error ? error.message.replace(/\n/g, ' | ') : String(error);
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

const text = (result) => result.content?.find((c) => c.type === 'text')?.text;

const checks = [
  {
    name: 'server/discover: 2026-07-28 negotiated, serverInfo in _meta',
    run: async (client) => {
      assert(client.getNegotiatedProtocolVersion() === '2026-07-28', `negotiated ${client.getNegotiatedProtocolVersion()}`);
      const discover = client.getDiscoverResult();
      const info = discover?._meta?.['io.modelcontextprotocol/serverInfo'];
      assert(info?.name === 'showcase', `serverInfo ${JSON.stringify(info)}`);
      assert(discover.supportedVersions.includes('2026-07-28'), `supportedVersions ${discover.supportedVersions}`);
    },
  },
  {
    name: 'tools/list: the showcase tools',
    run: async (client) => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['add', 'ask_model', 'order', 'roots']) assert(names.includes(n), `no ${n} in ${names}`);
      return `${tools.length} tools`;
    },
  },
  {
    name: 'tools/call add: structured result',
    run: async (client) => {
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      assert(result.structuredContent?.result === 5, JSON.stringify(result));
    },
  },
  {
    name: 'tools/call ask_model: sampling as a multi round-trip request',
    run: async (client) => {
      const result = await client.callTool({ name: 'ask_model', arguments: { question: '?' } });
      assert(text(result) === 'ts2-model says: 42', JSON.stringify(result));
    },
  },
  {
    name: 'tools/call order: elicitation as a multi round-trip request',
    run: async (client) => {
      const result = await client.callTool({ name: 'order', arguments: { item: 'tea' } });
      assert(text(result) === 'ordered tea: {"gift":false,"quantity":2}', JSON.stringify(result));
    },
  },
  {
    name: 'tools/call roots: roots as a multi round-trip request',
    run: async (client) => {
      const result = await client.callTool({ name: 'roots', arguments: {} });
      assert(text(result) === 'file:///tmp/ts2', JSON.stringify(result));
    },
  },
  {
    name: 'prompts/get review and resources/read',
    run: async (client) => {
      const prompt = await client.getPrompt({ name: 'review', arguments: { code: 'x' } });
      assert(prompt.messages.length > 0, JSON.stringify(prompt));
      const readme = await client.readResource({ uri: 'showcase://readme' });
      assert(readme.contents[0].text.startsWith('# Showcase'), JSON.stringify(readme));
    },
  },
  {
    name: 'tools/call of an unknown tool: an error',
    run: async (client) => {
      let failed = false;
      try {
        const result = await client.callTool({ name: 'no_such_tool', arguments: {} });
        failed = result.isError === true;
      } catch {
        failed = true;
      }
      assert(failed, 'no error');
    },
  },
  {
    name: 'custom method example/reverse: Client.request with a custom result schema; an unknown one is -32601',
    run: async (client) => {
      const schema = z.object({ text: z.string() });
      const result = await client.request({ method: 'example/reverse', params: { text: 'stressed' } }, schema);
      assert(result.text === 'desserts', JSON.stringify(result));
      // Over HTTP the server answers 404 with the -32601 body the transport's text asks for;
      // this SDK reads JSON-RPC errors from 400 bodies only and reports the 404 with the body
      // in its message.
      let error;
      try {
        await client.request({ method: 'example/no-such-method', params: {} }, schema);
      } catch (e) {
        error = e;
      }
      const rpc = error?.code === -32601;
      const http404 = error?.code === 'CLIENT_HTTP_NOT_IMPLEMENTED' && /"code":\s*-32601/.test(error.message);
      assert(rpc || http404, `expected -32601, got ${error?.code}: ${error?.message}`);
      return rpc ? '-32601' : 'HTTP 404 with -32601';
    },
  },
];

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error('usage: node client.mjs --http <url> | <server command> [args...]');
    process.exit(2);
  }
  const transport =
    command === '--http'
      ? new StreamableHTTPClientTransport(new URL(args[0]))
      : new StdioClientTransport({ command, args, stderr: 'inherit' });
  const client = new Client(
    { name: 'mcp-rust-sdk-interop-ts2', version: '0.0.0' },
    {
      capabilities: { sampling: {}, elicitation: {}, roots: {} },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: '42' },
    model: 'ts2-model',
    stopReason: 'endTurn',
  }));
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { quantity: 2, gift: false } }));
  client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///tmp/ts2' }] }));

  let passed = 0;
  let failed = 0;
  try {
    await withTimeout(client.connect(transport), CHECK_TIMEOUT_MS);
  } catch (error) {
    console.log(`not ok - connect (server/discover): ${describe(error)}`);
    console.log(`0 passed, ${1 + checks.length} failed`);
    process.exit(1);
  }
  for (const check of checks) {
    try {
      const note = await withTimeout(check.run(client), CHECK_TIMEOUT_MS);
      console.log(`ok - ${check.name}${note ? ` (${note})` : ''}`);
      passed += 1;
    } catch (error) {
      console.log(`not ok - ${check.name}: ${describe(error)}`);
      failed += 1;
    }
  }
  await withTimeout(client.close(), CHECK_TIMEOUT_MS).catch((error) => console.log(`# close: ${describe(error)}`));
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

main().catch((error) => {
  console.log(`not ok - harness: ${describe(error)}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
