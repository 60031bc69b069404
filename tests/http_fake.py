"""The JSON plumbing shared by the tests' stand-ins for HTTP APIs (Voyage, Brave)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler


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
