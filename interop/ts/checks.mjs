// The checks client.mjs runs, in order, after the `initialize` handshake. Each is
// `{ name, run(ctx) }`: `run` throws (e.g. a failed assertion) to fail, and may return a short
// note printed after `ok - name`. `ctx` holds:
//   client             the connected `Client` of @modelcontextprotocol/sdk
//   offeredVersion     the protocol revision the client offered in `initialize`
//   negotiatedVersion  the revision the server answered with
// To add a check (e.g. for prompts or resources once the server has them), append an entry;
// the Python client (../python/checks.py) should get the same one.

import assert from 'node:assert/strict';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

export const checks = [
  {
    name: 'initialize: serverInfo.name is "echo"',
    run: ({ client }) => {
      assert.equal(client.getServerVersion()?.name, 'echo');
    },
  },
  {
    name: 'initialize: the server accepts the revision the client offered',
    run: ({ offeredVersion, negotiatedVersion }) => {
      assert.equal(negotiatedVersion, offeredVersion);
      return negotiatedVersion;
    },
  },
  {
    name: 'initialize: the server advertises tools',
    run: ({ client }) => {
      assert.ok(client.getServerCapabilities()?.tools, 'capabilities.tools is missing');
    },
  },
  {
    name: 'tools/list: has "echo" with an object inputSchema',
    run: async ({ client }) => {
      const { tools } = await client.listTools();
      const echo = tools.find((tool) => tool.name === 'echo');
      assert.ok(echo, `no "echo" among ${JSON.stringify(tools.map((tool) => tool.name))}`);
      assert.equal(echo.inputSchema?.type, 'object');
      assert.equal(echo.inputSchema?.properties?.text?.type, 'string');
      return `${tools.length} tools`;
    },
  },
  {
    name: 'tools/call echo: returns the text it is given',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
      assert.ok(!result.isError, `isError: ${JSON.stringify(result)}`);
      assert.deepEqual(result.content, [{ type: 'text', text: 'héllo' }]);
    },
  },
  {
    name: 'tools/call of an unknown tool: is an error',
    run: async ({ client }) => {
      // Either form is allowed: a JSON-RPC error (ours: -32602) or a result with isError.
      let result;
      try {
        result = await client.callTool({ name: 'no-such-tool', arguments: {} });
      } catch (error) {
        if (error instanceof McpError) {
          return `JSON-RPC error ${error.code}`;
        }
        throw error;
      }
      assert.equal(result.isError, true, `not an error: ${JSON.stringify(result)}`);
      return 'isError result';
    },
  },
  {
    name: 'ping: answered',
    run: async ({ client }) => {
      const result = await client.ping();
      assert.deepEqual(result, {});
    },
  },
];
