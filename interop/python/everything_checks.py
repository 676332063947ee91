"""The checks client.py runs when MCP_INTEROP_CHECKS=server-everything: against the official
`@modelcontextprotocol/server-everything` (reached through `mcp proxy URL` by `cargo xtask
interop`), where checks.py are for our `stdio_server`. Same shape (`Check(name, run)`, a
`Context`); the TypeScript client (../ts/everything_checks.mjs) has the same checks.
"""

from __future__ import annotations

from mcp import types

from checks import Check, Context, texts


async def server_name(ctx: Context) -> str:
    name = ctx.init.server_info.name
    assert name == "mcp-servers/everything", f"serverInfo.name is {name!r}"
    return ctx.init.protocol_version


async def ping(ctx: Context) -> None:
    await ctx.session.send_ping()


async def list_tools(ctx: Context) -> str:
    tools = (await ctx.session.list_tools()).tools
    names = [tool.name for tool in tools]
    for name in ("echo", "get-sum", "trigger-long-running-operation"):
        assert name in names, f"no {name!r} among {names}"
    return f"{len(tools)} tools"


async def echo(ctx: Context) -> None:
    result = await ctx.session.call_tool("echo", {"message": "hello through the proxy ✓"})
    assert texts(result.content) == "Echo: hello through the proxy ✓", f"{result}"


async def get_sum(ctx: Context) -> None:
    result = await ctx.session.call_tool("get-sum", {"a": 2, "b": 40.5})
    assert texts(result.content) == "The sum of 2 and 40.5 is 42.5.", f"{result}"


async def long_running(ctx: Context) -> str:
    progress: list[tuple[float, float | None]] = []

    async def on_progress(value: float, total: float | None, _message: str | None) -> None:
        progress.append((value, total))

    result = await ctx.session.call_tool(
        "trigger-long-running-operation", {"duration": 1, "steps": 4}, progress_callback=on_progress
    )
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)], f"progress {progress}"
    assert texts(result.content).startswith("Long running operation completed"), f"{result}"
    return f"{len(progress)} progress notifications"


async def elicitation(ctx: Context) -> None:
    before = len(ctx.inputs.elicitations)
    result = await ctx.session.call_tool("trigger-elicitation-request", {})
    assert len(ctx.inputs.elicitations) > before, "no elicitation/create reached the client"
    assert "User declined" in texts(result.content), f"{result}"


async def args_prompt(ctx: Context) -> None:
    got = await ctx.session.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
    assert got.messages[0].content.text == "What's weather in Paris, Texas?", f"{got}"


async def templates(ctx: Context) -> None:
    listed = (await ctx.session.list_resource_templates()).resource_templates
    uris = [t.uri_template for t in listed]
    assert "demo://resource/dynamic/text/{resourceId}" in uris, f"templates: {uris}"
    read = await ctx.session.read_resource("demo://resource/dynamic/text/7")
    assert read.contents[0].text.startswith("Resource 7: This is a plaintext resource"), f"{read}"


async def completion(ctx: Context) -> None:
    done = await ctx.session.complete(
        types.PromptReference(type="ref/prompt", name="completable-prompt"), {"name": "department", "value": "S"}
    )
    assert done.completion.values == ["Sales", "Support"], f"{done}"


async def logging_level(ctx: Context) -> None:
    await ctx.session.set_logging_level("info")


CHECKS: list[Check] = [
    Check('initialize: serverInfo.name is "mcp-servers/everything"', server_name),
    Check("ping: answered", ping),
    Check("tools/list: echo, get-sum and trigger-long-running-operation are offered", list_tools),
    Check("tools/call echo: non-ASCII text comes back unchanged", echo),
    Check("tools/call get-sum: numbers as arguments", get_sum),
    Check("tools/call trigger-long-running-operation: progress notifications reach the client", long_running),
    Check("elicitation: the server asks the client through the proxy (a form, declined)", elicitation),
    Check("prompts/get args-prompt: arguments", args_prompt),
    Check("resources/templates/list and a templated read", templates),
    Check("completion/complete: a prompt argument", completion),
    Check("logging/setLevel: accepted", logging_level),
]
