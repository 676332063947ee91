// The checks client.mjs runs when MCP_INTEROP_CHECKS=server-everything: against the official
// @modelcontextprotocol/server-everything (reached through `mcp proxy URL` by `cargo xtask
// interop`), where ./checks.mjs are for our `stdio_server`. Same shape: `{ name, run(ctx) }`,
// `ctx` as client.mjs describes it. The Python client (../python/everything_checks.py) has the
// same checks.

import assert from 'node:assert/strict';

import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const text = (content) => content.filter((c) => c.type === 'text').map((c) => c.text).join('');

export const checks = [
  {
    name: 'initialize: serverInfo.name is "mcp-servers/everything"',
    run: ({ client, negotiatedVersion }) => {
      assert.equal(client.getServerVersion()?.name, 'mcp-servers/everything');
      return negotiatedVersion;
    },
  },
  {
    name: 'ping: answered',
    run: async ({ client }) => {
      await client.ping();
    },
  },
  {
    name: 'tools/list: echo, get-sum and trigger-long-running-operation are offered',
    run: async ({ client }) => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      for (const name of ['echo', 'get-sum', 'trigger-long-running-operation']) {
        assert.ok(names.includes(name), `no "${name}" among ${JSON.stringify(names)}`);
      }
      return `${tools.length} tools`;
    },
  },
  {
    name: 'tools/call echo: non-ASCII text comes back unchanged',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'hello through the proxy ✓' } });
      assert.equal(text(result.content), 'Echo: hello through the proxy ✓');
    },
  },
  {
    name: 'tools/call get-sum: numbers as arguments',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40.5 } });
      assert.equal(text(result.content), 'The sum of 2 and 40.5 is 42.5.');
    },
  },
  {
    name: 'tools/call trigger-long-running-operation: progress notifications reach the client',
    run: async ({ client }) => {
      const progress = [];
      const result = await client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
        CallToolResultSchema,
        { onprogress: (p) => progress.push(p) },
      );
      // The SDK drops a progress notification it reads in the same chunk as the answer
      // (the answer removes the handler before the notification's microtask runs:
      // typescript-sdk issue 2580). The server sends the last one just before its answer,
      // so through a pipe it may be lost on the client's side; the others may not.
      const got = progress.map((p) => [p.progress, p.total]);
      const all = [[1, 4], [2, 4], [3, 4], [4, 4]];
      assert.ok(got.length >= 3, `only ${got.length} progress notifications`);
      assert.deepEqual(got, all.slice(0, got.length));
      assert.ok(text(result.content).startsWith('Long running operation completed'), text(result.content));
      return `${progress.length} progress notifications`;
    },
  },
  {
    name: 'elicitation: the server asks the client through the proxy (a form, declined)',
    run: async (ctx) => {
      const before = ctx.elicitations.length;
      const result = await ctx.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      assert.ok(ctx.elicitations.length > before, 'no elicitation/create reached the client');
      assert.ok(text(result.content).includes('User declined'), text(result.content));
    },
  },
  {
    name: 'prompts/get args-prompt: arguments',
    run: async ({ client }) => {
      const got = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'Texas' } });
      assert.equal(got.messages[0]?.content?.text, "What's weather in Paris, Texas?");
    },
  },
  {
    name: 'resources/templates/list and a templated read',
    run: async ({ client }) => {
      const { resourceTemplates } = await client.listResourceTemplates();
      const uris = resourceTemplates.map((t) => t.uriTemplate);
      assert.ok(uris.includes('demo://resource/dynamic/text/{resourceId}'), JSON.stringify(uris));
      const read = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
      assert.ok(read.contents[0]?.text?.startsWith('Resource 7: This is a plaintext resource'), JSON.stringify(read));
    },
  },
  {
    name: 'completion/complete: a prompt argument',
    run: async ({ client }) => {
      const done = await client.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'department', value: 'S' },
      });
      assert.deepEqual(done.completion.values, ['Sales', 'Support']);
    },
  },
  {
    name: 'logging/setLevel: accepted',
    run: async ({ client }) => {
      await client.setLoggingLevel('info');
    },
  },
];
