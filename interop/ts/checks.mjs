// The checks client.mjs runs, in order, after the `initialize` handshake, against the
// `stdio_server` example (the "showcase" server). Each is `{ name, run(ctx) }`: `run` throws
// (e.g. a failed assertion) to fail, and may return a short note printed after `ok - name`.
// `ctx` holds:
//   client             the connected `Client` of @modelcontextprotocol/sdk
//   offeredVersion     the protocol revision the client offered in `initialize`
//   negotiatedVersion  the revision the server answered with
//   elicitations       the params of each `elicitation/create` the server sent (URL mode is
//                      accepted, forms declined)
//   waitForCompletion  (id) => a promise kept when `notifications/elicitation/complete` names id
// To add a check, append an entry; the Python client (../python/checks.py) should get the same.

import assert from 'node:assert/strict';

import { z } from 'zod';

import { CallToolResultSchema, McpError, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';

const text = (content) => content.filter((c) => c.type === 'text').map((c) => c.text).join('');

export const checks = [
  {
    name: 'initialize: serverInfo.name is "showcase"',
    run: ({ client }) => {
      assert.equal(client.getServerVersion()?.name, 'showcase');
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
    name: 'initialize: the server advertises tools, prompts, resources, completions, logging',
    run: ({ client }) => {
      const caps = client.getServerCapabilities() ?? {};
      for (const key of ['tools', 'prompts', 'resources', 'completions', 'logging']) {
        assert.ok(caps[key], `capabilities.${key} is missing: ${JSON.stringify(caps)}`);
      }
    },
  },
  {
    name: 'tools/list: "add" has an object inputSchema with number a and b, no $ref',
    run: async ({ client }) => {
      const { tools } = await client.listTools();
      const add = tools.find((tool) => tool.name === 'add');
      assert.ok(add, `no "add" among ${JSON.stringify(tools.map((tool) => tool.name))}`);
      assert.equal(add.inputSchema?.type, 'object');
      assert.equal(add.inputSchema?.properties?.a?.type, 'number');
      assert.deepEqual([...(add.inputSchema?.required ?? [])].sort(), ['a', 'b']);
      assert.ok(!JSON.stringify(tools).includes('"$ref"'), 'a schema has a $ref');
      return `${tools.length} tools`;
    },
  },
  {
    name: 'tools/call add: structured result with its text form',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      assert.ok(!result.isError, `isError: ${JSON.stringify(result)}`);
      assert.deepEqual(result.structuredContent, { result: 5 });
      assert.deepEqual(JSON.parse(text(result.content)), { result: 5 });
    },
  },
  {
    name: 'tools/call weather: structured output matching its outputSchema',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'weather', arguments: { city: 'Lisbon' } });
      assert.equal(result.structuredContent?.city, 'Lisbon');
      assert.equal(typeof result.structuredContent?.temperature, 'number');
    },
  },
  {
    name: 'tools/call with bad arguments: an isError result',
    run: async ({ client }) => {
      const result = await client.callTool({ name: 'add', arguments: { a: 'two' } });
      assert.equal(result.isError, true, JSON.stringify(result));
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
    name: 'prompts/list and prompts/get review',
    run: async ({ client }) => {
      const { prompts } = await client.listPrompts();
      const review = prompts.find((p) => p.name === 'review');
      assert.ok(review, JSON.stringify(prompts));
      assert.ok(review.arguments?.some((a) => a.name === 'code' && a.required), JSON.stringify(review));
      const got = await client.getPrompt({ name: 'review', arguments: { code: 'x = 1', language: 'python' } });
      assert.equal(got.messages[0].role, 'user');
      assert.match(got.messages[0].content.text, /python code:\n\nx = 1/);
    },
  },
  {
    name: 'resources/list and resources/read',
    run: async ({ client }) => {
      const { resources } = await client.listResources();
      assert.ok(resources.some((r) => r.uri === 'showcase://readme'), JSON.stringify(resources));
      const read = await client.readResource({ uri: 'showcase://readme' });
      assert.match(read.contents[0].text, /^# Showcase/);
    },
  },
  {
    name: 'resources/templates/list and a templated read',
    run: async ({ client }) => {
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'notes://{id}'), JSON.stringify(resourceTemplates));
      const read = await client.readResource({ uri: 'notes://ideas' });
      assert.equal(read.contents[0].text, 'a faster MCP SDK');
    },
  },
  {
    name: 'resources/read of an unknown note: an error',
    run: async ({ client }) => {
      await assert.rejects(client.readResource({ uri: 'notes://nope' }), McpError);
    },
  },
  {
    name: 'completion/complete for a prompt argument and a template variable',
    run: async ({ client }) => {
      const lang = await client.complete({ ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'language', value: 'r' } });
      assert.deepEqual(lang.completion.values, ['rust']);
      const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: 'i' } });
      assert.deepEqual(ids.completion.values, ['ideas']);
    },
  },
  {
    name: 'elicitation (2025-11-25): connect_account asks for a URL visit with an elicitationId, then completes it',
    run: async (ctx) => {
      const before = ctx.elicitations.length;
      const result = await ctx.client.callTool({ name: 'connect_account', arguments: {} });
      assert.ok(!result.isError, `isError: ${JSON.stringify(result)}`);
      const request = ctx.elicitations[before];
      assert.equal(request?.mode, 'url', `not a URL elicitation: ${JSON.stringify(request)}`);
      assert.ok(request.elicitationId?.length >= 16, `elicitationId: ${request.elicitationId}`);
      assert.equal(request.url, `https://example.com/connect?state=${request.elicitationId}`);
      assert.equal(request.message, 'Sign in to Example Co');
      assert.equal(text(result.content), `connecting (elicitation ${request.elicitationId})`);
      await ctx.waitForCompletion(request.elicitationId);
      return `completed ${request.elicitationId}`;
    },
  },
  {
    name: 'elicitation (2025-11-25): account_files fails with -32042 listing the URL elicitation it needs',
    run: async ({ client }) => {
      let error;
      try {
        await client.callTool({ name: 'account_files', arguments: {} });
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof UrlElicitationRequiredError, `not a UrlElicitationRequiredError: ${error}`);
      assert.equal(error.code, -32042);
      assert.equal(error.elicitations.length, 1);
      const [needed] = error.elicitations;
      assert.equal(needed.mode, 'url');
      assert.equal(needed.url, `https://example.com/connect?state=${needed.elicitationId}`);
      assert.equal(needed.message, 'Sign in to Example Co to list your files');
    },
  },
  {
    name: 'ping: answered',
    run: async ({ client }) => {
      const result = await client.ping();
      assert.deepEqual(result, {});
    },
  },
  {
    name: 'tasks (2025-11-25): build runs as a task: created, streamed to its result, then tasks/get and tasks/list',
    run: async ({ client, negotiatedVersion }) => {
      assert.equal(negotiatedVersion, '2025-11-25', 'tasks need 2025-11-25');
      assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'no tasks.requests.tools.call capability');
      const { tools } = await client.listTools();
      assert.equal(tools.find((t) => t.name === 'build')?.execution?.taskSupport, 'optional');
      const messages = [];
      const stream = client.experimental.tasks.callToolStream(
        { name: 'build', arguments: { target: 'ts', steps: 2 } },
        CallToolResultSchema,
        { task: { ttl: 60000 } },
      );
      for await (const message of stream) messages.push(message);
      const created = messages.find((m) => m.type === 'taskCreated');
      assert.ok(created, `no taskCreated in ${JSON.stringify(messages)}`);
      const result = messages.find((m) => m.type === 'result');
      assert.ok(result, `no result in ${JSON.stringify(messages)}`);
      assert.equal(result.result.content[0].text, 'built ts in 2 steps');
      const id = created.task.taskId;
      const got = await client.experimental.tasks.getTask(id);
      assert.equal(got.status, 'completed');
      const { tasks } = await client.experimental.tasks.listTasks();
      assert.ok(tasks.some((t) => t.taskId === id), JSON.stringify(tasks));
      return `${messages.length} messages, task ${id}`;
    },
  },
  {
    name: 'tasks (2025-11-25): cancelling a finished task or reading an unknown one is -32602',
    run: async ({ client }) => {
      const { tasks } = await client.experimental.tasks.listTasks();
      assert.ok(tasks.length > 0, 'no task to cancel');
      const done = tasks.find((t) => t.status === 'completed');
      await assert.rejects(client.experimental.tasks.cancelTask(done.taskId), (e) => e instanceof McpError && e.code === -32602);
      await assert.rejects(client.experimental.tasks.getTask('no-such-task'), (e) => e instanceof McpError && e.code === -32602);
    },
  },
  {
    name: 'custom method example/reverse: Client.request with a custom result schema, its custom notification, -32602 and -32601',
    run: async ({ client }) => {
      assert.ok(client.getServerCapabilities()?.experimental?.reverse, 'no experimental.reverse capability');
      const notes = [];
      client.fallbackNotificationHandler = async (notification) => {
        notes.push(notification);
      };
      const schema = z.object({ text: z.string() });
      const result = await client.request({ method: 'example/reverse', params: { text: 'stressed' } }, schema);
      assert.equal(result.text, 'desserts');
      // Sent before the answer, on the same connection: handled by now.
      assert.deepEqual(notes.map((n) => [n.method, n.params?.text]), [['example/reversing', 'stressed']]);
      const code = (expected) => (e) => e instanceof McpError && e.code === expected;
      await assert.rejects(client.request({ method: 'example/reverse', params: { text: 1 } }, schema), code(-32602));
      await assert.rejects(client.request({ method: 'example/no-such-method', params: {} }, schema), code(-32601));
    },
  },
];
