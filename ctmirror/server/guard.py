"""The server belongs to its user: an ASGI layer in front of every surface that a web page cannot drive.

- Host: only the names the server was told it answers to (the loopback names, the bound address, `--allow-host`),
  so a DNS-rebinding page, whose requests carry its own host name, is refused.
- Origin: a request a browser sends from a page carries one; any request with a body, and any to /mcp, from an
  origin whose host is not allowed is refused.
- A body is JSON (`application/json` or `…+json`): a cross-site form or `text/plain` POST, which a browser sends
  without asking first, is refused.
- A body larger than the limit is refused (413) before more than the limit is read, whether its length is
  declared or it comes in chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from ctmirror.core.errors import InputError

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def host_name(value: str) -> str:
    """The host of a Host header or of an origin's authority, lower-cased, without its port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """Loopback names, the address the server is bound to (unless it is every address) and the ones given."""
    names = set(LOOPBACK_HOSTS) | {host_name(h) for h in extra if h.strip()}
    if bound not in ("0.0.0.0", "::", ""):
        names.add(host_name(bound))
    return frozenset(names)


class Guard:
    def __init__(self, app, *, hosts: frozenset[str], max_body: int) -> None:
        self.app, self.hosts, self.max_body = app, hosts, max_body

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        method, path = scope["method"], scope.get("path", "")
        host = host_name(headers.get("host", ""))
        if host not in self.hosts:
            await _refuse(send, 421, f"this server does not answer to the host {host or '(none)'!r}; start it with "
                                     "--allow-host NAME to let it")
            return
        origin = headers.get("origin")
        if origin is not None and (method in BODY_METHODS or path.startswith("/mcp")) \
                and host_name(urlsplit(origin).netloc) not in self.hosts:
            await _refuse(send, 403, f"requests from pages of {origin!r} are refused: only this server's own "
                                     "hosts may send them (--allow-host)")
            return
        if method not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type != "application/json" and not media_type.endswith("+json"):
            await _refuse(send, 415, f"the body must be JSON, sent with Content-Type: application/json (got "
                                     f"{media_type or 'none'!r})")
            return
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await _refuse(send, 413, f"the body is larger than {self.max_body:,} bytes")
            return
        body = bytearray()
        more = True
        while more:  # at most the limit is read: a larger body is refused before the rest arrives
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _refuse(send, 413, f"the body is larger than {self.max_body:,} bytes")
                return
        await self.app(scope, _replay(bytes(body), receive), send)


def _replay(body: bytes, receive):
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the client's disconnect, when it comes

    return replayed


async def _refuse(send, status: int, message: str) -> None:
    body = json.dumps(InputError(message,
                                 hint="send the request as this server's own client would").envelope()).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
