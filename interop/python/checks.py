"""The checks client.py runs, in order, after the `initialize` handshake.

Each is a `Check(name, run)`: `run(ctx)` is a coroutine that raises (e.g. AssertionError) to
fail and may return a short note printed after `ok - name`. `ctx` is a `Context`. The server is
the `stdio_server` example (the "showcase" server). To add a check, append to `CHECKS`; the
TypeScript client (../ts/checks.mjs) should get the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Literal

import json

import anyio
from mcp import ClientSession, InitializeResult, MCPError, UrlElicitationRequiredError, types


class Inputs:
    """The client's side of elicitation: every request the server makes is kept, a URL one is
    accepted (without visiting it), a form one declined; the ids of the URL elicitations the
    server says are complete (`notifications/elicitation/complete`) are kept too."""

    def __init__(self) -> None:
        self.elicitations: list[types.ElicitRequestParams] = []
        self.completed: set[str] = set()
        self._changed = anyio.Event()

    async def elicit(self, _context, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitations.append(params)
        action = "accept" if isinstance(params, types.ElicitRequestURLParams) else "decline"
        return types.ElicitResult(action=action)

    async def on_message(self, message) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.add(message.params.elicitation_id)
            changed, self._changed = self._changed, anyio.Event()
            changed.set()

    async def wait_completed(self, elicitation_id: str) -> None:
        while elicitation_id not in self.completed:
            await self._changed.wait()


@dataclass
class Context:
    session: ClientSession
    """The initialized session."""
    init: InitializeResult
    """The server's answer to `initialize`."""
    offered_version: str
    """The protocol revision the client offered in `initialize`."""
    inputs: Inputs
    """What the server asked of the user."""


@dataclass
class Check:
    name: str
    run: Callable[[Context], Awaitable[str | None]]


def texts(content) -> str:
    return "".join(block.text for block in content if getattr(block, "type", None) == "text")


async def server_name(ctx: Context) -> None:
    assert ctx.init.server_info.name == "showcase", f"serverInfo.name is {ctx.init.server_info.name!r}"


async def negotiated_version(ctx: Context) -> str:
    version = ctx.init.protocol_version
    assert version == ctx.offered_version, f"offered {ctx.offered_version}, server answered {version}"
    return version


async def advertises_capabilities(ctx: Context) -> None:
    caps = ctx.init.capabilities
    for name in ("tools", "prompts", "resources", "completions", "logging"):
        assert getattr(caps, name) is not None, f"capabilities.{name} is missing: {caps}"


async def list_tools(ctx: Context) -> str:
    tools = (await ctx.session.list_tools()).tools
    add = next((tool for tool in tools if tool.name == "add"), None)
    assert add is not None, f"no 'add' among {[tool.name for tool in tools]}"
    assert add.input_schema.get("type") == "object", f"inputSchema: {add.input_schema}"
    assert add.input_schema.get("properties", {}).get("a", {}).get("type") == "number", f"{add.input_schema}"
    assert sorted(add.input_schema.get("required", [])) == ["a", "b"], f"{add.input_schema}"
    assert "$ref" not in json.dumps([tool.input_schema for tool in tools]), "a schema has a $ref"
    return f"{len(tools)} tools"


async def call_add(ctx: Context) -> None:
    result = await ctx.session.call_tool("add", {"a": 2, "b": 3})
    assert not result.is_error, f"isError: {result}"
    assert result.structured_content == {"result": 5}, f"structuredContent: {result.structured_content}"
    assert json.loads(texts(result.content)) == {"result": 5}, f"content: {result.content}"


async def call_weather(ctx: Context) -> None:
    result = await ctx.session.call_tool("weather", {"city": "Lisbon"})
    assert not result.is_error, f"isError: {result}"
    assert result.structured_content["city"] == "Lisbon", f"{result.structured_content}"


async def call_with_bad_arguments(ctx: Context) -> None:
    result = await ctx.session.call_tool("add", {"a": "two"})
    assert result.is_error, f"not an error: {result}"


async def call_unknown_tool(ctx: Context) -> str:
    # Either form is allowed: a JSON-RPC error (ours: -32602) or a result with isError.
    try:
        result = await ctx.session.call_tool("no-such-tool", {})
    except MCPError as error:
        return f"JSON-RPC error {error.code}"
    assert result.is_error, f"not an error: {result}"
    return "isError result"


async def prompts(ctx: Context) -> None:
    listed = (await ctx.session.list_prompts()).prompts
    review = next((p for p in listed if p.name == "review"), None)
    assert review is not None, f"prompts: {listed}"
    assert any(a.name == "code" and a.required for a in review.arguments or []), f"{review}"
    got = await ctx.session.get_prompt("review", {"code": "x = 1", "language": "python"})
    assert got.messages[0].role == "user", f"{got}"
    assert "python code:\n\nx = 1" in got.messages[0].content.text, f"{got}"


async def resources(ctx: Context) -> None:
    listed = (await ctx.session.list_resources()).resources
    assert any(str(r.uri) == "showcase://readme" for r in listed), f"resources: {listed}"
    read = await ctx.session.read_resource("showcase://readme")
    assert read.contents[0].text.startswith("# Showcase"), f"{read}"


async def templates(ctx: Context) -> None:
    listed = (await ctx.session.list_resource_templates()).resource_templates
    assert any(t.uri_template == "notes://{id}" for t in listed), f"templates: {listed}"
    read = await ctx.session.read_resource("notes://ideas")
    assert read.contents[0].text == "a faster MCP SDK", f"{read}"


async def unknown_resource(ctx: Context) -> str:
    try:
        await ctx.session.read_resource("notes://nope")
    except MCPError as error:
        return f"JSON-RPC error {error.code}"
    raise AssertionError("reading notes://nope did not fail")


async def completions(ctx: Context) -> None:
    lang = await ctx.session.complete(
        types.PromptReference(type="ref/prompt", name="review"), {"name": "language", "value": "r"}
    )
    assert lang.completion.values == ["rust"], f"{lang}"
    ids = await ctx.session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="notes://{id}"), {"name": "id", "value": "i"}
    )
    assert ids.completion.values == ["ideas"], f"{ids}"


async def ping(ctx: Context) -> None:
    await ctx.session.send_ping()


class ReverseParams(types.RequestParams):
    text: str


class ReverseRequest(types.Request[ReverseParams, Literal["example/reverse"]]):
    """`example/reverse`: the showcase server's custom method (outside the protocol)."""

    method: Literal["example/reverse"] = "example/reverse"


class UnknownRequest(types.Request[types.RequestParams, Literal["example/no-such-method"]]):
    method: Literal["example/no-such-method"] = "example/no-such-method"


class ReverseResult(types.Result):
    text: str


async def custom_method(ctx: Context) -> None:
    experimental = ctx.init.capabilities.experimental or {}
    assert "reverse" in experimental, f"no experimental.reverse: {ctx.init.capabilities}"
    result = await ctx.session.send_request(ReverseRequest(params=ReverseParams(text="stressed")), ReverseResult)
    assert result.text == "desserts", f"{result}"
    try:
        await ctx.session.send_request(UnknownRequest(params=types.RequestParams()), ReverseResult)
    except MCPError as error:
        assert error.code == -32601, f"{error.code}: {error}"
        return
    raise AssertionError("an unknown custom method did not fail")


async def url_elicitation(ctx: Context) -> str:
    before = len(ctx.inputs.elicitations)
    result = await ctx.session.call_tool("connect_account", {})
    assert not result.is_error, f"is_error: {result}"
    assert len(ctx.inputs.elicitations) > before, "no elicitation/create reached the client"
    request = ctx.inputs.elicitations[before]
    assert isinstance(request, types.ElicitRequestURLParams), f"not a URL elicitation: {request}"
    assert len(request.elicitation_id) >= 16, f"elicitation_id: {request.elicitation_id}"
    assert request.url == f"https://example.com/connect?state={request.elicitation_id}", request.url
    assert request.message == "Sign in to Example Co", request.message
    assert texts(result.content) == f"connecting (elicitation {request.elicitation_id})", texts(result.content)
    await ctx.inputs.wait_completed(request.elicitation_id)
    return f"completed {request.elicitation_id}"


async def url_elicitation_required(ctx: Context) -> None:
    try:
        await ctx.session.call_tool("account_files", {})
    except MCPError as error:
        assert error.code == -32042, f"{error.code}: {error}"
        needed = UrlElicitationRequiredError.from_error(error.error).elicitations
        assert len(needed) == 1, f"{needed}"
        assert needed[0].mode == "url", f"{needed[0]}"
        assert needed[0].url == f"https://example.com/connect?state={needed[0].elicitation_id}", needed[0].url
        assert needed[0].message == "Sign in to Example Co to list your files", needed[0].message
        return
    raise AssertionError("account_files did not fail")


CHECKS: list[Check] = [
    Check('initialize: serverInfo.name is "showcase"', server_name),
    Check("initialize: the server accepts the revision the client offered", negotiated_version),
    Check("initialize: the server advertises tools, prompts, resources, completions, logging", advertises_capabilities),
    Check('tools/list: "add" has an object inputSchema with number a and b, no $ref', list_tools),
    Check("tools/call add: structured result with its text form", call_add),
    Check("tools/call weather: structured output matching its outputSchema", call_weather),
    Check("tools/call with bad arguments: an isError result", call_with_bad_arguments),
    Check("tools/call of an unknown tool: is an error", call_unknown_tool),
    Check("prompts/list and prompts/get review", prompts),
    Check("resources/list and resources/read", resources),
    Check("resources/templates/list and a templated read", templates),
    Check("resources/read of an unknown note: an error", unknown_resource),
    Check("completion/complete for a prompt argument and a template variable", completions),
    Check("elicitation (2025-11-25): connect_account asks for a URL visit with an elicitation_id, then completes it", url_elicitation),
    Check("elicitation (2025-11-25): account_files fails with -32042 listing the URL elicitation it needs", url_elicitation_required),
    Check("ping: answered", ping),
    Check("custom method example/reverse: send_request with a custom request and result type; -32601", custom_method),
]
