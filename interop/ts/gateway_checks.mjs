// The checks client.mjs runs when MCP_INTEROP_CHECKS=gateway: against our `gateway` example
// (`cargo xtask interop`), which mounts the official server-everything (stdio) as `official`
// and our `everything` (Streamable HTTP) as `ours`. Same shape as ./checks.mjs; the Python
// client (../python/gateway_checks.py) has the same checks.

import assert from 'node:assert/strict';

import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const text = (content) => content.filter((c) => c.type === 'text').map((c) => c.text).join('');

export const checks = [
  {
    name: 'initialize: serverInfo.name is "mcp-rust-gateway"',
    run: ({ client, negotiatedVersion }) => {
      assert.equal(client.getServerVersion()?.name, 'mcp-rust-gateway');
      return negotiatedVersion;
    },
  },
  {
    name: 'tools/list: the tools of both mounted servers, under their prefixes',
    run: async ({ client }) => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      for (const name of ['official_echo', 'official_trigger-long-running-operation', 'ours_test_sampling']) {
        assert.ok(names.includes(name), `no "${name}" among ${JSON.stringify(names)}`);
      }
      return `${tools.length} tools`;
    },
  },
  {
    name: 'tools/call official_echo: a tool of the official server',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'official_echo', arguments: { message: 'through the gateway ✓' } });
      assert.equal(text(result.content), 'Echo: through the gateway ✓');
    },
  },
  {
    name: 'tools/call ours_test_simple_text: a tool of ours',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'ours_test_simple_text', arguments: {} });
      assert.equal(text(result.content), 'This is a simple text response for testing.');
    },
  },
  {
    name: 'sampling: ours_test_sampling asks this client through the gateway',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'ours_test_sampling', arguments: { prompt: 'hello' } });
      assert.equal(text(result.content), 'LLM response: sampled by the interop client');
    },
  },
  {
    name: 'progress: official_trigger-long-running-operation reports through the gateway',
    run: async ({ client }) => {
      const progress = [];
      const result = await client.callTool(
        { name: 'official_trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
        CallToolResultSchema,
        { onprogress: (p) => progress.push(p) },
      );
      // As in ./everything_checks.mjs: the SDK may drop the last notification, read in the
      // same chunk as the answer (typescript-sdk issue 2580).
      const got = progress.map((p) => [p.progress, p.total]);
      const all = [[1, 4], [2, 4], [3, 4], [4, 4]];
      assert.ok(got.length >= 3, `only ${got.length} progress notifications`);
      assert.deepEqual(got, all.slice(0, got.length));
      assert.ok(text(result.content).startsWith('Long running operation completed'), text(result.content));
      return `${progress.length} progress notifications`;
    },
  },
];
