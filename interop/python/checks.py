"""The checks client.py runs, in order, after the `initialize` handshake.

Each is a `Check(name, run)`: `run(ctx)` is a coroutine that raises (e.g. AssertionError) to
fail and may return a short note printed after `ok - name`. `ctx` is a `Context`. To add a check
(e.g. for prompts or resources once the server has them), append to `CHECKS`; the TypeScript
client (../ts/checks.mjs) should get the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from mcp import ClientSession, InitializeResult, MCPError


@dataclass
class Context:
    session: ClientSession
    """The initialized session."""
    init: InitializeResult
    """The server's answer to `initialize`."""
    offered_version: str
    """The protocol revision the client offered in `initialize`."""


@dataclass
class Check:
    name: str
    run: Callable[[Context], Awaitable[str | None]]


async def server_name(ctx: Context) -> None:
    assert ctx.init.server_info.name == "echo", f"serverInfo.name is {ctx.init.server_info.name!r}"


async def negotiated_version(ctx: Context) -> str:
    version = ctx.init.protocol_version
    assert version == ctx.offered_version, f"offered {ctx.offered_version}, server answered {version}"
    return version


async def advertises_tools(ctx: Context) -> None:
    assert ctx.init.capabilities.tools is not None, "capabilities.tools is missing"


async def list_tools(ctx: Context) -> str:
    tools = (await ctx.session.list_tools()).tools
    echo = next((tool for tool in tools if tool.name == "echo"), None)
    assert echo is not None, f"no 'echo' among {[tool.name for tool in tools]}"
    assert echo.input_schema.get("type") == "object", f"inputSchema: {echo.input_schema}"
    text = echo.input_schema.get("properties", {}).get("text", {})
    assert text.get("type") == "string", f"inputSchema: {echo.input_schema}"
    return f"{len(tools)} tools"


async def call_echo(ctx: Context) -> None:
    result = await ctx.session.call_tool("echo", {"text": "héllo"})
    assert not result.is_error, f"isError: {result}"
    content = [block.model_dump(mode="json", exclude_none=True) for block in result.content]
    assert content == [{"type": "text", "text": "héllo"}], f"content: {content}"


async def call_unknown_tool(ctx: Context) -> str:
    # Either form is allowed: a JSON-RPC error (ours: -32602) or a result with isError.
    try:
        result = await ctx.session.call_tool("no-such-tool", {})
    except MCPError as error:
        return f"JSON-RPC error {error.code}"
    assert result.is_error, f"not an error: {result}"
    return "isError result"


async def ping(ctx: Context) -> None:
    await ctx.session.send_ping()


CHECKS: list[Check] = [
    Check('initialize: serverInfo.name is "echo"', server_name),
    Check("initialize: the server accepts the revision the client offered", negotiated_version),
    Check("initialize: the server advertises tools", advertises_tools),
    Check('tools/list: has "echo" with an object inputSchema', list_tools),
    Check("tools/call echo: returns the text it is given", call_echo),
    Check("tools/call of an unknown tool: is an error", call_unknown_tool),
    Check("ping: answered", ping),
]
