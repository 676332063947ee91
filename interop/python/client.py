"""Drives an MCP server with the official Python SDK client.

    python client.py <server command> [server args...]   (stdio: spawns the server)
    python client.py --http <url>                          (Streamable HTTP)
    python client.py --sse <url>                           (HTTP+SSE)

Runs the checks of checks.py (of everything_checks.py with MCP_INTEROP_CHECKS=server-everything,
for the official server-everything), printing one `ok - ...` / `not ok - ...` line each, then
`N passed, M failed`; exit code 0 only if every check passed. Run by `cargo xtask interop`,
which installs the SDK in a venv (see ../README.md).
"""

from __future__ import annotations

import contextlib
import os
import sys

import anyio
from mcp import ClientSession, Implementation, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from checks import Context, Inputs

if os.environ.get("MCP_INTEROP_CHECKS") == "server-everything":
    from everything_checks import CHECKS
elif os.environ.get("MCP_INTEROP_CHECKS") == "gateway":
    from gateway_checks import CHECKS
else:
    from checks import CHECKS

# Through the gateway, a mounted server's sampling request reaches this client, which answers
# it (declared only then: the other checks see a client without sampling).
SAMPLING = os.environ.get("MCP_INTEROP_CHECKS") == "gateway"


async def sample(_context: object, _params: object) -> object:
    from mcp import types

    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled by the interop client"),
        model="interop",
    )

# A hung check fails on its own instead of eating the whole run's time budget (the xtask kills
# the run after 60 s), so the checks after it still report.
CHECK_TIMEOUT_S = 10.0


def describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return f"no answer within {CHECK_TIMEOUT_S:g} s"
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text.replace("\n", " | ")


async def run(command: str, args: list[str]) -> int:
    passed = 0
    failed = 0
    try:
        async with open_transport(command, args) as (read, write):
            client_info = Implementation(name="mcp-rust-sdk-interop", version="0.0.0")
            inputs = Inputs()
            async with ClientSession(
                read,
                write,
                client_info=client_info,
                elicitation_callback=inputs.elicit,
                message_handler=inputs.on_message,
                sampling_callback=sample if SAMPLING else None,
            ) as session:
                try:
                    with anyio.fail_after(CHECK_TIMEOUT_S):
                        init = await session.initialize()
                except Exception as error:  # reported as a check, not a crash
                    print(f"not ok - initialize handshake: {describe(error)}", flush=True)
                    for check in CHECKS:
                        print(f"not ok - {check.name} # not run: no connection", flush=True)
                    print(f"0 passed, {1 + len(CHECKS)} failed", flush=True)
                    return 1
                ctx = Context(session=session, init=init, offered_version=LATEST_HANDSHAKE_VERSION, inputs=inputs)
                for check in CHECKS:
                    try:
                        with anyio.fail_after(CHECK_TIMEOUT_S):
                            note = await check.run(ctx)
                    except Exception as error:
                        print(f"not ok - {check.name}: {describe(error)}", flush=True)
                        failed += 1
                    else:
                        print(f"ok - {check.name}{f' ({note})' if note else ''}", flush=True)
                        passed += 1
    except Exception as error:
        # Spawning the server or tearing the connection down failed.
        print(f"not ok - connection: {describe(error)}", flush=True)
        failed += 1
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


@contextlib.asynccontextmanager
async def open_transport(command: str, args: list[str]):
    """The (read, write) streams of a stdio, Streamable HTTP or legacy SSE connection."""
    if command == "--http":
        async with streamable_http_client(args[0]) as streams:
            yield streams[0], streams[1]
    elif command == "--sse":
        async with sse_client(args[0]) as streams:
            yield streams[0], streams[1]
    else:
        async with stdio_client(StdioServerParameters(command=command, args=args)) as (read, write):
            yield read, write


def main() -> int:
    # The checks print non-ASCII text; do not depend on the locale CI happens to have.
    sys.stdout.reconfigure(encoding="utf-8")
    if len(sys.argv) < 2:
        print("usage: python client.py <server command> [server args...]", file=sys.stderr)
        return 2
    return anyio.run(run, sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
