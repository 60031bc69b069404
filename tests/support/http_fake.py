"""The plumbing shared by the tests' stand-ins for HTTP APIs (Voyage, Brave, a chat endpoint):
a server on 127.0.0.1 at a free port, and a handler that answers in JSON."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that answers in JSON and keeps quiet in the test log."""

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class LocalServer:
    """Serves `handler` on 127.0.0.1 from a thread, from construction until `close`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.root = f"http://127.0.0.1:{self._server.server_address[1]}"
        # Polling every 50 ms rather than 500 makes `close` (shutdown waits for a poll) quick.
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
