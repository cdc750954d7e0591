"""Connections spread evenly over `ctmirror serve --workers N` processes.

uvicorn's worker processes share one listening socket, and the first to wake accepts every connection waiting
(asyncio accepts up to the backlog at a time): eight keep-alive clients came to split 8/0, 7/1 or 5/3, so one
worker's requests queued while the other had nothing to do. Here each worker accepts only while it holds no more
open connections than the least loaded live worker; the counts are in a small file every worker maps (one slot a
worker). A connection left waiting a tenth of a second is accepted by whoever sees it, so a stuck worker never
holds new clients back.

uvicorn names its event loop by import string (`loop=`): `BalancedEventLoop` is asyncio's selector loop whose
`create_server(sock=...)` accepts with public calls (`add_reader`, `connect_accepted_socket`) under that rule.
"""

from __future__ import annotations

import asyncio
import fcntl
import mmap
import os
import select
import socket
import struct
import time
from pathlib import Path

BALANCE_FILE = "CTMIRROR_SERVE_BALANCE"  # the environment variable naming the shared counts file
SLOT = struct.Struct("<qq")  # a worker's pid and its open connections
TURN = 0.001  # seconds a worker waits, while a connection is another's to take, before it looks again
STALE = 0.1  # seconds a waiting connection may wait for its turn before anyone accepts it


def make_balance_file(folder: Path, workers: int) -> Path:
    """The shared counts file for `workers` processes (zeroed slots), made by the parent before it starts them."""
    path = folder / "connections"
    path.write_bytes(bytes(SLOT.size * workers))
    return path


class ConnectionCounts:
    """This worker's slot in the shared file, and the others' counts."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "r+b")
        self._map = mmap.mmap(self._file.fileno(), 0)
        self.slots = len(self._map) // SLOT.size
        fcntl.flock(self._file, fcntl.LOCK_EX)  # slots are claimed one worker at a time
        try:
            self.slot = next((n for n in range(self.slots) if not _alive(self._read(n)[0])), None)
            if self.slot is not None:
                SLOT.pack_into(self._map, self.slot * SLOT.size, os.getpid(), 0)
        finally:
            fcntl.flock(self._file, fcntl.LOCK_UN)

    def _read(self, n: int) -> tuple[int, int]:
        return SLOT.unpack_from(self._map, n * SLOT.size)

    def set(self, count: int) -> None:
        if self.slot is not None:
            SLOT.pack_into(self._map, self.slot * SLOT.size, os.getpid(), count)

    def my_turn(self, count: int) -> bool:
        """Whether this worker, holding `count` connections, holds no more than every other live worker."""
        if self.slot is None:  # more workers than slots (a restarted one whose slot was not yet freed): no rule
            return True
        others = [c for n in range(self.slots) if n != self.slot
                  for pid, c in [self._read(n)] if pid and _alive(pid)]
        return not others or count <= min(others)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class BalancedServer:
    """What `create_server(sock=...)` returns: accepts on `sock` in turn with the other workers."""

    def __init__(self, loop: asyncio.AbstractEventLoop, protocol_factory, sock: socket.socket,
                 counts: ConnectionCounts, backlog: int) -> None:
        self._loop, self._factory, self._sock, self._counts = loop, protocol_factory, sock, counts
        self.sockets = [sock]
        self._open: set[asyncio.BaseTransport] = set()
        self._fd = sock.fileno()  # kept: uvicorn closes the socket at shutdown, before this task ends
        sock.setblocking(False)
        sock.listen(backlog)  # as asyncio's own server does: the socket handed over is bound, not yet listening
        self._task = loop.create_task(self._accept_forever())

    def _live(self) -> int:
        self._open = {t for t in self._open if not t.is_closing()}
        self._counts.set(len(self._open))
        return len(self._open)

    async def _readable(self, timeout: float) -> None:
        """Returns once the listening socket has a connection waiting, or after `timeout` seconds."""
        ready = self._loop.create_future()
        self._loop.add_reader(self._fd, lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait_for(ready, timeout)
        except TimeoutError:
            pass
        finally:
            self._loop.remove_reader(self._fd)

    def _waiting(self) -> bool:
        """Whether a connection is waiting on the listening socket (taken by nobody yet)."""
        return bool(select.select([self._fd], [], [], 0)[0])

    async def _accept_forever(self) -> None:
        while True:
            await self._readable(STALE)  # every worker wakes for a new connection
            if not self._waiting():
                continue
            since = time.monotonic()
            # another worker's turn: give it a moment, look again; after STALE, take the connection anyway
            while not self._counts.my_turn(self._live()) and time.monotonic() - since < STALE:
                await asyncio.sleep(TURN)
                if not self._waiting():
                    break
            try:
                connection, _ = self._sock.accept()  # non-blocking: another worker may have taken it
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue
            except OSError:
                await asyncio.sleep(TURN)  # out of file descriptors, for instance: the kernel keeps the client
                continue
            try:
                transport, _ = await self._loop.connect_accepted_socket(self._counted_protocol, connection)
            except OSError:
                connection.close()
                continue
            self._open.add(transport)
            self._live()  # the others see this worker's count at once

    def _counted_protocol(self) -> asyncio.Protocol:
        """uvicorn's protocol for a connection, which gives the count back to the others when it closes."""
        protocol = self._factory()
        lost = protocol.connection_lost

        def connection_lost(exc: Exception | None) -> None:
            try:
                lost(exc)
            finally:
                self._live()

        protocol.connection_lost = connection_lost
        return protocol

    def close(self) -> None:
        self._task.cancel()

    async def wait_closed(self) -> None:
        try:
            await self._task
        except asyncio.CancelledError:
            pass

    def is_serving(self) -> bool:
        return not self._task.done()


class BalancedEventLoop(asyncio.SelectorEventLoop):
    """asyncio's loop, but a server on a shared listening socket (a worker's) accepts in turn (module doc)."""

    async def create_server(self, protocol_factory, host=None, port=None, *, sock=None, **options):
        path = os.environ.get(BALANCE_FILE)
        if sock is None or not path or options.get("ssl") is not None:
            return await super().create_server(protocol_factory, host, port, sock=sock, **options)
        return BalancedServer(self, protocol_factory, sock, ConnectionCounts(Path(path)), options.get("backlog", 100))
