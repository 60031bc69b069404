"""The local model's vectors of sentences and paragraphs, kept per process.

Claims are checked against the same paragraphs again and again (17 claims against one NDA, an
answer's citations against the paragraphs its context held), and contract clauses are labelled
with the same label texts: each text is embedded once. The local model is used whatever a
snapshot was embedded with, since these vectors are compared with each other, never with the
snapshot's.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from lexkb.core.embed.embedders import LocalEmbedder


@cache
def _embedder() -> LocalEmbedder:
    """The local model, whatever the snapshot was embedded with: claims and sentences are
    compared with each other, never with the snapshot's vectors."""
    from lexkb.core.embed.embedders import LocalEmbedder

    return LocalEmbedder()


_VECTOR_CACHE: dict[str, np.ndarray] = {}
_VECTOR_LOCK = threading.Lock()
_VECTOR_CACHE_SIZE = 50_000  # about 75 MB of 384-d float32 vectors


def sentence_vectors(texts: list[str]) -> np.ndarray:
    """The local model's vectors for `texts`, each sentence embedded once per process: the
    same paragraphs are checked again and again (17 claims against one NDA, an answer's
    citations against the paragraphs its context held)."""
    with _VECTOR_LOCK:  # the MCP server checks citations on several threads
        missing = list(dict.fromkeys(t for t in texts if t not in _VECTOR_CACHE))
        if missing:
            if len(_VECTOR_CACHE) + len(missing) > _VECTOR_CACHE_SIZE:
                _VECTOR_CACHE.clear()
            for text, vector in zip(missing, _embedder().embed_documents(missing), strict=True):
                _VECTOR_CACHE[text] = vector
        return np.stack([_VECTOR_CACHE[t] for t in texts])
