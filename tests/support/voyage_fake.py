"""A stand-in for the Voyage AI HTTP API on 127.0.0.1, for tests only.

It answers POST /v1/embeddings the way the real service does (JSON body, `data[i].embedding`,
`usage.total_tokens`; 401, 429 and 503 with a `detail`), so the real `voyageai` client and
lexkb's batching and retry code run unchanged. Vectors are hashed bags of words: texts that share
words get similar vectors, which is enough to exercise dense and hybrid search.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import ThreadingHTTPServer

import numpy as np

from tests.support.http_fake import JSONHandler

DIMENSION = 64
KEY = "test-key"


def vector(text: str) -> list[float]:
    values = np.zeros(DIMENSION, dtype=np.float32)
    for word in re.findall(r"[a-z]{3,}", text.casefold()):
        values[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSION] += 1.0
    norm = float(np.linalg.norm(values)) or 1.0
    return (values / norm).tolist()


class FakeVoyage:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.failures: list[int] = []  # status codes to answer with before succeeding
        outer = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._send(401, {"detail": "Provided API key is invalid."})
                if outer.failures:
                    status = outer.failures.pop(0)
                    return self._send(status, {"detail": "try again later"})
                data = [
                    {"object": "embedding", "embedding": vector(text), "index": i}
                    for i, text in enumerate(body["input"])
                ]
                tokens = sum(len(t) // 4 + 1 for t in body["input"])
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"total_tokens": tokens},
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        # Polling every 50 ms rather than 500 makes `__exit__` (shutdown waits for a poll) quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    def __enter__(self) -> FakeVoyage:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
