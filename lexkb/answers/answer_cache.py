"""The answers `ask` keeps for a while: the same question asked again of the same snapshot,
searched and written the same way, is answered from here, not searched and judged again."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from lexkb.answers.answer import Answer


class AnswerCache:
    """Answers by (normalised question, normalised text searched, filters, snapshot version,
    how the answer is written) for `seconds`; emptied when asked under a different snapshot
    version than the last."""

    def __init__(self, max_entries: int = 1024) -> None:
        self._entries: dict[str, tuple[float, Answer]] = {}
        self._version: str | None = None
        self._lock = threading.Lock()
        self.max_entries = max_entries

    @staticmethod
    def key(
        question: str,
        filters: Mapping[str, Any] | None,
        version: str | None,
        searched: str | None = None,
        writer: str = "",
    ) -> str:
        """`searched` is the text searched when it is not the question (a follow-up's includes
        the question before it); `writer` names what writes the answer (a model, settings)."""

        def words(text: str) -> str:
            return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())

        return json.dumps(
            [words(question), words(searched or question), filters or {}, version, writer],
            sort_keys=True,
            default=str,
        )

    def get(self, key: str, version: str | None, seconds: float) -> Answer | None:
        with self._lock:
            if version != self._version:
                self._entries.clear()
                self._version = version
            found = self._entries.get(key)
            if found and time.monotonic() - found[0] <= seconds:
                return found[1]
            self._entries.pop(key, None)
            return None

    def put(self, key: str, answer: Answer) -> None:
        with self._lock:
            if len(self._entries) >= self.max_entries:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (time.monotonic(), answer)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


CACHE = AnswerCache()
