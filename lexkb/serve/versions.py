"""The JSON API's versions: /api/v1 is the current one (lexkb.serve.v1). The first routes, under
/api without a version, still answer as they did, for the clients and the page written against
them; each of their replies says that they are deprecated (RFC 9745's `Deprecation` header) and
names the route that replaces them (`Link: <...>; rel="successor-version"`), and the OpenAPI
document marks them deprecated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

V1 = "/api/v1"
# The paths no version applies to: the OpenAPI document describes both versions.
UNVERSIONED = ("/api/openapi.json", f"{V1}/openapi.json")
# When the first routes were deprecated (2026-11-27T00:00:00Z), as RFC 9745 writes it.
DEPRECATED_SINCE = "@1795737600"


def is_legacy(path: str) -> bool:
    """Is `path` one of the first, unversioned routes (or under their prefix)?"""
    return path.startswith("/api/") and not path.startswith(V1 + "/") and path not in UNVERSIONED


def successor(path: str) -> str:
    """The /api/v1 path that replaces a legacy one: the same path under the version."""
    return V1 + path.removeprefix("/api")


class Deprecated:
    """ASGI middleware: every reply to a legacy path carries Deprecation and its successor."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_legacy(scope["path"]):
            await self.app(scope, receive, send)
            return
        target = quote(successor(scope["path"]), safe="/%:@!$&'()*+,;=-._~")
        link = f'<{target}>; rel="successor-version"'.encode()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                # One Link field: a paged reply's rel="next" and the successor side by side.
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"link"]
                links = [v for k, v in message.get("headers", []) if k.lower() == b"link"]
                headers += [(b"deprecation", DEPRECATED_SINCE.encode()),
                            (b"link", b", ".join([*links, link]))]  # fmt: skip
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)
