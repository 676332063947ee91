// A small MCP server written with the official TypeScript SDK (1.x), over stdio, whose one tool
// runs a tool loop through the client's model: sampling with tools (SEP-1577, 2025-11-25).
//
//   node sampling_tools_server.mjs
//
// `ask_weather` asks the client's model `question` with the tool `get_weather` offered
// (`toolChoice: {mode: "required"}`); the model must answer with a `tool_use` of it (stop
// reason `toolUse`). The server runs the tool, sends the conversation back with the
// `tool_result` (`toolChoice: {mode: "none"}`), and returns the model's final text, with what
// the model asked for as structured content. Any departure is thrown, and so reaches the
// client as a tool error. Driven by our client's `interop_sampling_tools` example (see
// ../README.md); `cargo xtask interop` copies it next to the SDK.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The current weather in a city',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', description: 'The city' } },
    required: ['city'],
  },
};

/** What `get_weather` knows. */
function weather(city) {
  return city === 'Paris' ? 'sunny, 21 °C' : `no weather known for ${city}`;
}

const blocks = (content) => (Array.isArray(content) ? content : [content]);

const server = new McpServer({ name: 'ts-sampling-tools', version: '1.0.0' });

server.registerTool(
  'ask_weather',
  {
    description: "Asks the client's model a question, with a weather tool it may use",
    inputSchema: { question: z.string() },
    outputSchema: { toolUses: z.number(), city: z.string(), answer: z.string(), model: z.string() },
  },
  async ({ question }) => {
    const messages = [{ role: 'user', content: { type: 'text', text: question } }];
    const first = await server.server.createMessage({
      messages,
      maxTokens: 200,
      systemPrompt: 'Use get_weather for weather questions.',
      tools: [WEATHER_TOOL],
      toolChoice: { mode: 'required' },
    });
    const uses = blocks(first.content).filter((b) => b.type === 'tool_use');
    if (first.stopReason !== 'toolUse' || uses.length !== 1) {
      throw new Error(`expected one tool_use with stopReason toolUse, got ${JSON.stringify(first)}`);
    }
    const [use] = uses;
    if (use.name !== WEATHER_TOOL.name || typeof use.input?.city !== 'string') {
      throw new Error(`the model called an unknown tool or without a city: ${JSON.stringify(use)}`);
    }
    messages.push({ role: 'assistant', content: blocks(first.content) });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', toolUseId: use.id, content: [{ type: 'text', text: weather(use.input.city) }] }],
    });
    const second = await server.server.createMessage({
      messages,
      maxTokens: 200,
      tools: [WEATHER_TOOL],
      toolChoice: { mode: 'none' },
    });
    const text = blocks(second.content).filter((b) => b.type === 'text');
    if (second.stopReason !== 'endTurn' || text.length === 0) {
      throw new Error(`expected a final text with stopReason endTurn, got ${JSON.stringify(second)}`);
    }
    const answer = text.map((b) => b.text).join('');
    const structured = { toolUses: uses.length, city: use.input.city, answer, model: second.model };
    return { content: [{ type: 'text', text: answer }], structuredContent: structured };
  },
);

await server.connect(new StdioServerTransport());
