"""The official Python SDK's OAuth client against our resource server (the `auth_server`
example, behind a real OpenID provider), run by `cargo xtask auth-e2e`:

    python oauth_client.py http://127.0.0.1:PORT/mcp

The SDK does the protocol inside its httpx auth: on our 401 it reads our protected resource
metadata (RFC 9728) and the provider's metadata, registers (DCR), asks for the user's
authorization with PKCE, `resource` and `offline_access`, exchanges the code, and retries; on
our 403 `insufficient_scope` it steps up. The user's part is played by the redirect handler:
a cookie-keeping HTTP client follows the provider's redirects until the redirect URI. Prints
`ok - ..`/`not ok - ..` per check and `N passed, M failed`; exits with 0 only if none failed.
"""

from __future__ import annotations

import json
import sys
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
from mcp import ClientSession, Implementation
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

CHECK_TIMEOUT_S = 15.0
# Never listened on: the headless browser stops when it is redirected there.
REDIRECT = "http://127.0.0.1:9/callback"


class MemoryStorage:
    """The SDK's `TokenStorage`, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """The user agent: follows redirects, keeping cookies, until the redirect URI."""

    def __init__(self) -> None:
        self.http = httpx2.AsyncClient(follow_redirects=False)
        self.visits = 0
        self.urls: list[str] = []
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        self.visits += 1
        self.urls.append(url)
        for _ in range(20):
            if url.startswith(REDIRECT):
                query = parse_qs(urlparse(url).query)
                first = lambda key: query.get(key, [None])[0]  # noqa: E731
                self.result = AuthorizationCodeResult(code=first("code"), state=first("state"), iss=first("iss"))
                return
            response = await self.http.get(url)
            location = response.headers.get("location")
            if location is None:
                raise RuntimeError(f"{url} answered {response.status_code} without a redirect: {response.text[:300]}")
            url = urljoin(url, location)
        raise RuntimeError("more than 20 redirects")

    async def callback(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise RuntimeError("the browser did not reach the redirect URI")
        result, self.result = self.result, None
        return result


def scope_of(url: str) -> list[str]:
    return (parse_qs(urlparse(url).query).get("scope", [""])[0]).split()


def structured(result) -> object:
    return result.structured_content


async def run(server: str) -> int:
    passed = 0
    failed = 0
    browser = Browser()
    storage = MemoryStorage()
    metadata = OAuthClientMetadata(
        client_name="mcp-interop-python-oauth",
        redirect_uris=[AnyUrl(REDIRECT)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    auth = OAuthClientProvider(server, metadata, storage, redirect_handler=browser.open, callback_handler=browser.callback)

    async def connect_and_call(session: ClientSession) -> str:
        await session.initialize()
        assert browser.visits == 1, f"{browser.visits} authorizations"
        tools = (await session.list_tools()).tools
        assert any(t.name == "add" for t in tools), "no add tool"
        result = await session.call_tool("add", {"a": 2, "b": 3})
        assert not result.is_error and structured(result) == {"result": 5}, result
        scope = scope_of(browser.urls[0])
        assert "mcp:read" in scope and "offline_access" in scope, f"scope {scope}"
        return f"client {storage.client.client_id if storage.client else '?'}, scope {' '.join(scope)}"

    async def refresh_token_issued(_session: ClientSession) -> str:
        assert storage.tokens is not None and storage.tokens.refresh_token, "no refresh token"
        return ""

    async def step_up(session: ClientSession) -> str:
        result = await session.call_tool("count_down", {"from": 2})
        assert not result.is_error, result
        text = "".join(c.text for c in result.content if c.type == "text")
        assert text == "counted down from 2", text
        assert browser.visits == 2, f"{browser.visits} authorizations"
        scope = scope_of(browser.urls[1])
        assert "mcp:read" in scope and "mcp:write" in scope, f"scope {scope}"
        return " ".join(scope)

    checks = [
        ("the SDK authorizes on our 401 (metadata, DCR, PKCE, resource), then lists and calls tools", connect_and_call),
        ("a refresh token is issued (offline_access with prompt=consent)", refresh_token_issued),
        ("403 insufficient_scope on count_down: the SDK steps up to mcp:read mcp:write", step_up),
    ]
    try:
        async with httpx2.AsyncClient(auth=auth, timeout=30.0) as http:
            async with streamable_http_client(server, http_client=http) as streams:
                client_info = Implementation(name="mcp-interop-python-oauth", version="0.0.0")
                async with ClientSession(streams[0], streams[1], client_info=client_info) as session:
                    for name, check in checks:
                        try:
                            with anyio.fail_after(CHECK_TIMEOUT_S):
                                note = await check(session)
                        except Exception as error:  # reported as a check, not a crash
                            text = f"{type(error).__name__}: {error}".replace("\n", " | ")
                            print(f"not ok - {name}: {text}", flush=True)
                            failed += 1
                        else:
                            print(f"ok - {name}{f' ({note})' if note else ''}", flush=True)
                            passed += 1
    except Exception as error:
        print(f"not ok - connection: {type(error).__name__}: {json.dumps(str(error))}", flush=True)
        failed += 1
    await browser.http.aclose()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(run, sys.argv[1]))
