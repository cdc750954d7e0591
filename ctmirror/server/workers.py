"""`ctmirror serve --workers N`: N processes, each listening on the port with a socket of its own (SO_REUSEPORT),
so the kernel spreads new connections over them (by a hash of each connection's addresses) and no worker takes
connections another would serve sooner: with one shared socket, whichever worker woke first accepted every
connection waiting (eight keep-alive clients split 8/0 or 7/1 at times).

The parent process only supervises: it checks the port is free, starts the workers and lets them listen once all
are ready (a worker listening alone would be handed every connection made meanwhile, and keep-alive clients keep
theirs), starts a new one for any that dies, and on SIGTERM or Ctrl-C asks each to stop (uvicorn finishes the
requests in flight).
"""

from __future__ import annotations

import multiprocessing
import signal
import socket
import threading

from ctmirror.core.errors import CtmirrorError, InputError

# uvicorn's HTTP/1.1 protocol with Nagle's algorithm off (ctmirror/server/no_delay.py)
PROTOCOL = "ctmirror.server.no_delay:NoDelayH11Protocol"
CHECK_EVERY = 0.5  # seconds between the parent's looks at its workers
STOP_WAIT = 30.0  # seconds a worker has to finish its requests once asked to stop


def free_address(host: str, port: int) -> tuple[socket.AddressFamily, int]:
    """(address family, port) of host:port, once a socket without SO_REUSEPORT could bind it: a port another
    server listens on (with or without SO_REUSEPORT) is refused here, so two servers never share one by mistake.
    Port 0 becomes a free port the workers then share."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT does not block
        try:
            probe.bind(address)
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}",
                             hint="Stop what listens there, or pick another --port.") from None
        return family, probe.getsockname()[1]


def listening_socket(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    """A worker's own socket on host:port, bound beside the other workers' (asyncio makes it listen)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def _worker(settings, family: socket.AddressFamily, host: str, port: int, ready, listen) -> None:
    import uvicorn

    from ctmirror.server.app import create_app

    sock = listening_socket(family, host, port)
    config = uvicorn.Config(create_app(settings), log_level="warning", http=PROTOCOL)
    ready.release()
    listen.wait()
    uvicorn.Server(config).run(sockets=[sock])


def run_workers(settings, *, host: str, port: int, workers: int) -> None:
    """Runs `workers` server processes on host:port until SIGTERM or Ctrl-C."""
    if not hasattr(socket, "SO_REUSEPORT"):
        raise InputError("--workers needs sockets that share a port (SO_REUSEPORT), which this system lacks",
                         hint="Run one worker (--workers 1), or several servers on ports of their own.")
    family, port = free_address(host, port)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no DuckDB state inherited

    ready, listen = context.Semaphore(0), context.Event()

    def start() -> multiprocessing.Process:
        process = context.Process(target=_worker, args=(settings, family, host, port, ready, listen),
                                  name="ctmirror-serve")
        process.start()
        return process

    stopping = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stopping.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    processes = [start() for _ in range(workers)]
    try:
        started = 0
        while started < workers and not stopping.is_set():
            if ready.acquire(timeout=CHECK_EVERY):
                started += 1
            elif not all(process.is_alive() for process in processes):
                raise CtmirrorError("a worker of ctmirror serve stopped before it was ready (its error is above)")
        listen.set()  # from here on a new worker listens as soon as it is ready
        while not stopping.wait(CHECK_EVERY):
            for n, process in enumerate(processes):
                if not process.is_alive():  # died (killed, out of memory): its connections are lost, not its port
                    processes[n] = start()
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn stops accepting and finishes what is in flight
        for process in processes:
            process.join(STOP_WAIT)
            if process.is_alive():
                process.kill()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
