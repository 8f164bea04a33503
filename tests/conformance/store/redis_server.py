"""A real ``redis-server`` for the shared-database tests, and a peer that never answers.

The server is Debian's (installed by ``.ci/run``), started on a free loopback port with
nothing saved to disk and stopped by its pid: nothing is left running.  Without the
``redis`` package or the server, a test skips (and fails under ``.ci/run``).
"""

from __future__ import annotations

import contextlib
import selectors
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from toolchains import missing

try:
    import redis
except ImportError:  # the optional extra: every test here skips, or fails under .ci/run
    redis = None


def need_redis_package() -> None:
    if redis is None:
        missing("the redis package is not installed (pip install 'stella-conform[redis]')")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server on a loopback port, nothing saved to disk."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            missing("redis-server is not installed")
        assert binary is not None
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def url_as(self, user: str, password: str) -> str:
        return f"redis://{user}:{password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = self.client()
        for _ in range(200):  # up to 10 s for the server to listen
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                if self.proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)
        pytest.fail("redis-server did not answer")

    def client(self) -> Any:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def wait_for_keys(self, pattern: str, proc: subprocess.Popen[str] | None = None) -> None:
        """Until some key matches (a worker has shared something), or the worker ended."""
        client = self.client()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if list(client.scan_iter(match=pattern, count=1000)):
                return
            if proc is not None and proc.poll() is not None:
                return
            time.sleep(0.05)


@contextlib.contextmanager
def running_server(workdir: Path) -> Iterator[RedisServer]:
    """A server started in ``workdir``, stopped afterwards (a test module's fixture)."""
    need_redis_package()
    srv = RedisServer(workdir)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


class HungPeer:
    """A server that accepts every connection and never answers (a Redis stuck on a
    slow disk, a proxy whose backend is gone): it counts the connections made to it."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _accept(self) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(self.listener, selectors.EVENT_READ)
            while not self._stop.is_set():
                if sel.select(timeout=0.1):
                    conn, _ = self.listener.accept()
                    self.accepted.append(conn)  # held open, never read from or written to

    def __enter__(self) -> HungPeer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for conn in self.accepted:
            conn.close()
        self.listener.close()
