"""Stand-ins for remote endpoints that stall, on 127.0.0.1: one that accepts connections and
never answers (an LLM endpoint that hangs), and a TCP proxy that can hold traffic to a real
server (an object store that stalls) until released."""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class HangingServer:
    """Accepts every connection on 127.0.0.1 and never reads or answers; counts them."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._held: list[socket.socket] = []
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def accepted(self) -> int:
        return len(self._held)

    def wait_for(self, count: int, timeout: float) -> int:
        """The number accepted, once it reaches `count` or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while self.accepted < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.accepted

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(connection)

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        for connection in self._held:
            connection.close()


class StallingProxy:
    """Forwards TCP connections on 127.0.0.1 to `upstream`; while `stall()` is in force, no
    byte from a client goes on until `release()`."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._flowing = threading.Event()
        self._flowing.set()
        threading.Thread(target=self._accept, daemon=True).start()

    def stall(self) -> None:
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, held: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if held:
                    self._flowing.wait()
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.release()
        self._listener.close()
