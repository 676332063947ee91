"""A small MCP server written with the official Python SDK, for our client to drive over stdio.

    python server.py

Run by `cargo xtask interop` as the server of `cargo run --example interop_client -- --python`
(see ../README.md). It offers a bit of everything a client has to handle:

- tools: `greet` (arguments), `weather` (structured output with an output schema), `countdown`
  (progress notifications and log messages), `ask_model` (sampling), `ask_user`
  (form elicitation), `authorize` (URL elicitation, then `notifications/elicitation/complete`),
  `client_roots` (roots), `touch` (a resource-updated notification), `fail`
  (a tool error);
- a prompt with arguments (`summarize`), a static resource (`info://server/readme`), a resource
  template (`notes://{topic}`), completions for the prompt's and the template's arguments;
- `logging/setLevel` and `resources/subscribe` / `resources/unsubscribe`, which `MCPServer` no
  longer serves by itself in mcp 2 (both are deprecated as of revision 2026-07-28, but are
  the way handshake-era clients get log messages and resource updates).
"""

from __future__ import annotations

import warnings
from typing import Any

from pydantic import BaseModel, Field

from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# `ctx.log`, `create_message`, `list_roots` and `logging/setLevel` are deprecated as of
# 2026-07-28; the client speaks 2025-11-25, where they are the way to do these things.
warnings.filterwarnings("ignore", message=r".*deprecated as of 2026-07-28.*")

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
TOPICS = ["rust", "python", "typescript", "go"]
STYLES = ["brief", "detailed", "bullet points"]

server = MCPServer(
    name="python-interop-server",
    version="1.0.0",
    instructions="A test server for the Rust SDK's client interop checks.",
)

# Connection state (one client per process: this is a stdio server).
min_level = "debug"
subscriptions: set[str] = set()


async def log(ctx: Context, level: str, message: str) -> None:
    """Sends a log message unless it is below the level the client set."""
    if LEVELS.index(level) >= LEVELS.index(min_level):
        await ctx.log(level, message, logger_name="python-interop-server")  # type: ignore[arg-type]


@server.tool(description="Greets someone by name", structured_output=False)
def greet(name: str, excited: bool = False) -> str:
    return f"Hello, {name}{'!' if excited else '.'}"


class Weather(BaseModel):
    city: str
    temperature: float = Field(description="Degrees Celsius")
    conditions: str


@server.tool(description="Today's (made-up) weather in a city, as structured content")
def weather(city: str) -> Weather:
    return Weather(city=city, temperature=21.5, conditions="sunny")


@server.tool(description="Counts down, reporting progress and logging each step", structured_output=False)
async def countdown(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await log(ctx, "info", f"step {step} of {steps}")
        await ctx.report_progress(step, steps, f"step {step}")
    await log(ctx, "debug", "countdown finished")
    return f"counted down {steps} steps"


@server.tool(description="Asks the client's model a question (sampling)", structured_output=False)
async def ask_model(question: str, ctx: Context) -> str:
    result = await ctx.session.create_message(  # type: ignore[call-overload]
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=50,
        system_prompt="Answer in one word.",
        related_request_id=ctx.request_id,
    )
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else repr(content)
    return f"{result.model} says: {text}"


class Contact(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(description="Your age", ge=0)
    subscribe: bool = Field(default=True, description="Subscribe to the newsletter?")


@server.tool(description="Asks the user for their contact details (elicitation)", structured_output=False)
async def ask_user(ctx: Context) -> str:
    answer = await ctx.elicit("Your contact details, please", Contact)
    if answer.action == "accept":
        data = answer.data
        return f"accepted: name={data.name} age={data.age} subscribe={data.subscribe}"
    return answer.action


@server.tool(description="Sends the user to a URL (URL-mode elicitation), then says it is done", structured_output=False)
async def authorize(ctx: Context) -> str:
    answer = await ctx.elicit_url("Sign in to continue", "https://example.com/login", "py-auth-1")
    if answer.action == "accept":
        # The out-of-band flow is over (pretend): tell the client, before answering.
        await ctx.session.send_elicit_complete("py-auth-1", related_request_id=ctx.request_id)
    return answer.action


@server.tool(description="Lists the client's roots", structured_output=False)
async def client_roots(ctx: Context) -> str:
    result = await ctx.session.list_roots()
    return "\n".join(f"{root.uri} {root.name or ''}".strip() for root in result.roots)


@server.tool(description="Marks a resource as changed, notifying subscribers", structured_output=False)
async def touch(uri: str, ctx: Context) -> str:
    if uri not in subscriptions:
        return f"nobody is subscribed to {uri}"
    await ctx.session.send_resource_updated(uri)
    return f"notified subscribers of {uri}"


@server.tool(description="Always fails", structured_output=False)
def fail() -> str:
    raise ToolError("this tool always fails")


@server.prompt(description="Asks for a summary of a topic")
def summarize(topic: str, style: str = "brief") -> str:
    return f"Please write a {style} summary about {topic}."


@server.resource("info://server/readme", name="readme", mime_type="text/plain", description="About this server")
def readme() -> str:
    return "This server exists to test MCP clients."


@server.resource("notes://{topic}", name="notes", mime_type="text/markdown", description="Notes on a topic")
def notes(topic: str) -> str:
    return f"# Notes on {topic}\n\nNothing yet."


@server.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if isinstance(ref, types.PromptReference) and ref.name == "summarize" and argument.name == "style":
        values = [s for s in STYLES if s.startswith(argument.value)]
    elif isinstance(ref, types.ResourceTemplateReference) and argument.name == "topic":
        values = [t for t in TOPICS if t.startswith(argument.value)]
    else:
        return None
    return types.Completion(values=values, total=len(values), has_more=False)


async def set_level(ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    global min_level
    min_level = params.level
    return types.EmptyResult()


async def subscribe(ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
    subscriptions.add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(
    ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
) -> types.EmptyResult:
    subscriptions.discard(str(params.uri))
    return types.EmptyResult()


lowlevel = server._lowlevel_server  # no public way to add these handlers to an MCPServer
lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)

if __name__ == "__main__":
    server.run("stdio")
