"""The benchmark echo server on the official Python SDK (`mcp`, as pinned in requirements.txt).

One tool, `echo` ({"text": string} in, the same text out as one text content block), with the
command line of our `examples/echo.rs`:

    python bench_echo.py --stdio                      stdio
    python bench_echo.py --http ADDR                  Streamable HTTP at http://ADDR/mcp, with
                                                      sessions and SSE responses to POSTs
    python bench_echo.py --http ADDR --stateless      no sessions, JSON responses

It is an `MCPServer` (FastMCP's successor in mcp 2: arguments validated by pydantic, as the
TypeScript servers validate theirs with zod) served as the SDK documents it: `run("stdio")`, and over
HTTP its `streamable_http_app(...)` (with `stateless_http=True, json_response=True` for
`--stateless`) on uvicorn. With `--lowlevel` it is the same tool on the low-level `Server` instead
(no argument validation; less work per request). Once bound it prints
`listening on http://ADDR/mcp` to stderr; nothing is logged per request (log level WARNING, no
uvicorn access log). Over stdio the SDK stops at end of input and drops requests still in flight,
so a client must keep stdin open until it has every answer.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import uvicorn

from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

server = MCPServer(name="bench-echo-python", version="1.0.0", log_level="WARNING")


@server.tool(description="Echoes the text back", structured_output=False)
def echo(text: str) -> str:
    return text


# The same tool on the low-level server (`--lowlevel`).
ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
ECHO_TOOL = types.Tool(name="echo", description="Echoes the text back", input_schema=ECHO_SCHEMA)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "echo":
        raise ValueError(f"unknown tool: {params.name}")
    text = (params.arguments or {}).get("text")
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(text))])


lowlevel = Server(
    "bench-echo-python-lowlevel",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    # Spares the 2026-07-28 HTTP path a `tools/list` call per request (for Mcp-Param headers).
    get_tool_input_schema=lambda name: ECHO_SCHEMA if name == "echo" else None,
)


async def serve_stdio_lowlevel() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


async def serve_http(app_server: MCPServer | Server[Any], addr: str, stateless: bool) -> None:
    host, _, port = addr.rpartition(":")
    host = host.strip("[]")
    app = app_server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=stateless,
        json_response=stateless,
        host=host,
    )
    config = uvicorn.Config(app, host=host, port=int(port), log_level="warning", access_log=False)
    http = uvicorn.Server(config)
    serving = asyncio.create_task(http.serve())
    while not http.started:
        if serving.done():
            await serving  # it failed to start: raise its error
            return
        await asyncio.sleep(0.01)
    bound_host, bound_port = http.servers[0].sockets[0].getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(f"listening on http://{shown}:{bound_port}/mcp", file=sys.stderr, flush=True)
    await serving


def main() -> None:
    args = sys.argv[1:]
    low = "--lowlevel" in args
    if "--stdio" in args:
        if low:
            asyncio.run(serve_stdio_lowlevel())
        else:
            server.run("stdio")
    elif "--http" in args and args.index("--http") + 1 < len(args):
        asyncio.run(serve_http(lowlevel if low else server, args[args.index("--http") + 1], "--stateless" in args))
    else:
        sys.exit("usage: bench_echo.py --stdio | --http ADDR [--stateless] [--lowlevel]")


if __name__ == "__main__":
    main()
