"""uvicorn's HTTP/1.1 protocol with Nagle's algorithm off on every connection.

A listening socket handed to uvicorn (the workers' own, ctmirror/server/workers.py) has protocol number 0, which
asyncio does not recognise as TCP, so it leaves Nagle on: a response's headers and body went out as two packets,
the second held until the client's delayed ACK, 40 ms a request (182 requests/s where one process gave 1,476).
uvicorn takes the protocol by import string.
"""

from __future__ import annotations

import socket

from uvicorn.protocols.http.h11_impl import H11Protocol


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
