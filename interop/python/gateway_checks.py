"""The checks client.py runs when MCP_INTEROP_CHECKS=gateway: against our `gateway` example
(`cargo xtask interop`), which mounts the official server-everything (stdio) as `official` and
our `everything` (Streamable HTTP) as `ours`. Same shape as checks.py; the TypeScript client
(../ts/gateway_checks.mjs) has the same checks.
"""

from __future__ import annotations

from checks import Check, Context, texts


async def server_name(ctx: Context) -> str:
    name = ctx.init.server_info.name
    assert name == "mcp-rust-gateway", f"serverInfo.name is {name!r}"
    return ctx.init.protocol_version


async def list_tools(ctx: Context) -> str:
    tools = (await ctx.session.list_tools()).tools
    names = [tool.name for tool in tools]
    for name in ("official_echo", "official_trigger-long-running-operation", "ours_test_sampling"):
        assert name in names, f"no {name!r} among {names}"
    return f"{len(tools)} tools"


async def official_echo(ctx: Context) -> None:
    result = await ctx.session.call_tool("official_echo", {"message": "through the gateway ✓"})
    assert texts(result.content) == "Echo: through the gateway ✓", f"{result}"


async def ours_simple_text(ctx: Context) -> None:
    result = await ctx.session.call_tool("ours_test_simple_text", {})
    assert texts(result.content) == "This is a simple text response for testing.", f"{result}"


async def sampling(ctx: Context) -> None:
    result = await ctx.session.call_tool("ours_test_sampling", {"prompt": "hello"})
    assert texts(result.content) == "LLM response: sampled by the interop client", f"{result}"


async def progress(ctx: Context) -> str:
    got: list[tuple[float, float | None]] = []

    async def on_progress(value: float, total: float | None, _message: str | None) -> None:
        got.append((value, total))

    result = await ctx.session.call_tool(
        "official_trigger-long-running-operation", {"duration": 1, "steps": 4}, progress_callback=on_progress
    )
    assert got == [(1, 4), (2, 4), (3, 4), (4, 4)], f"progress {got}"
    assert texts(result.content).startswith("Long running operation completed"), f"{result}"
    return f"{len(got)} progress notifications"


CHECKS: list[Check] = [
    Check('initialize: serverInfo.name is "mcp-rust-gateway"', server_name),
    Check("tools/list: the tools of both mounted servers, under their prefixes", list_tools),
    Check("tools/call official_echo: a tool of the official server", official_echo),
    Check("tools/call ours_test_simple_text: a tool of ours", ours_simple_text),
    Check("sampling: ours_test_sampling asks this client through the gateway", sampling),
    Check("progress: official_trigger-long-running-operation reports through the gateway", progress),
]
