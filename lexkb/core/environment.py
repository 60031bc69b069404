"""Every setting lexkb reads from the environment: each variable's name, meaning and default.

The one module of the query module, the ground floor and the build that reads `os.environ`
(tests/test_layering.py holds the rest to it). Values are read at each call, never cached, so a
variable set after import (by a test, by an operator's wrapper) is the one used. Keys
(VOYAGE_API_KEY, LEXKB_LLM_API_KEY, BRAVE_API_KEY, LEXKB_MCP_TOKEN) are returned only to the one
caller that sends or checks them; nothing here stores, writes or logs them. Changing the
environment (a library's telemetry switch set before its first import, variables handed to a
child process) reads no setting, and happens where it is needed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

# Where the variables' defaults live when they are not written here: the ANN threshold in
# lexkb.core.store.ann.MIN_VECTORS, the LLM deadline in lexkb.answers.external.llm, the MCP bounds in
# lexkb_service.mcp.http.HttpSettings, lexkb_service.mcp.pools and lexkb_service.mcp.admission.

# Both sides.
ROOT = "LEXKB_ROOT"  # the index root; the CLI's default var/index, the build's <repo>/var/index
CACHE = "LEXKB_CACHE"  # local mirrors of s3:// roots; default ~/.cache/lexkb
ANN_MIN_VECTORS = "LEXKB_ANN_MIN_VECTORS"  # vectors from which a snapshot gets an HNSW graph
# An s3:// root's endpoint (the first set wins; default AWS's own) and region (us-east-1).
S3_ENDPOINTS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
S3_REGIONS = ("AWS_REGION", "AWS_DEFAULT_REGION")
DEFAULT_S3_REGION = "us-east-1"
VOYAGE_API_KEY = "VOYAGE_API_KEY"  # Voyage AI's key: its embedder runs only with it
VOYAGE_BASE_URL = "VOYAGE_BASE_URL"  # another Voyage endpoint; default the client's own

# The query module's services.
SERVE_STORE = "LEXKB_SERVE_STORE"  # lexkb serve's key store: a file or a postgresql:// URL
SERVE_COST_PER_KEY = "LEXKB_SERVE_COST_PER_KEY"  # cost units one key may have in progress
MCP_TOKEN = "LEXKB_MCP_TOKEN"  # the bearer token MCP over HTTP asks of clients
MCP_READ_TIMEOUT = "LEXKB_MCP_READ_TIMEOUT"  # seconds a client may take to send a request
MCP_MAX_BODY_BYTES = "LEXKB_MCP_MAX_BODY_BYTES"  # the largest request body
MCP_MAX_SESSIONS = "LEXKB_MCP_MAX_SESSIONS"  # MCP sessions open at once
MCP_SESSION_IDLE = "LEXKB_MCP_SESSION_IDLE"  # seconds an unused session is kept
MCP_MAX_CONNECTIONS = "LEXKB_MCP_MAX_CONNECTIONS"  # connections open at once
MCP_MAX_HEADER_BYTES = "LEXKB_MCP_MAX_HEADER_BYTES"  # the largest request head
MCP_MAX_CLIENT_CONNECTIONS = "LEXKB_MCP_MAX_CLIENT_CONNECTIONS"  # connections of one client
MCP_OUTBOUND_CALLS = "LEXKB_MCP_OUTBOUND_CALLS"  # tool calls to the LLM or the web at once
MCP_COSTLY_CALLS = "LEXKB_MCP_COSTLY_CALLS"  # calls that run the pair models at once

# The assistant's endpoints: off (extractive answers, no web search) unless named.
LLM_URL = "LEXKB_LLM_URL"  # an OpenAI-compatible endpoint's base (".../v1")
LLM_MODEL = "LEXKB_LLM_MODEL"  # the model asked for
DEFAULT_LLM_MODEL = "default"
LLM_API_KEY = "LEXKB_LLM_API_KEY"  # sent to the endpoint as a bearer token when set
LLM_TIMEOUT = "LEXKB_LLM_TIMEOUT"  # a whole call's deadline in seconds
BRAVE_API_KEY = "BRAVE_API_KEY"  # Brave Search's key: web search runs only with it
BRAVE_SEARCH_URL = "BRAVE_SEARCH_URL"  # another Brave Search endpoint

# The build.
SOURCES = "LEXKB_SOURCES"  # files or folders to index, os.pathsep apart; default examples/corpus
EMBEDDER = "LEXKB_EMBEDDER"  # auto, local, voyage or none (assets.resources.EmbedderSettings)
DEFAULT_EMBEDDER = "auto"
DAGSTER_HOME = "DAGSTER_HOME"  # a Dagster instance to record builds in; default an ephemeral one


def _first(names: tuple[str, ...]) -> str | None:
    return next((value for name in names if (value := os.environ.get(name))), None)


def index_root() -> str | None:
    return os.environ.get(ROOT)


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE) or Path.home() / ".cache" / "lexkb")


def ann_min_vectors(default: int) -> int:
    raw = os.environ.get(ANN_MIN_VECTORS)
    return int(raw) if raw else default


def s3_endpoint() -> str | None:
    return _first(S3_ENDPOINTS)


def s3_region() -> str:
    return _first(S3_REGIONS) or DEFAULT_S3_REGION


def voyage_api_key() -> str | None:
    return os.environ.get(VOYAGE_API_KEY)


def voyage_base_url() -> str | None:
    return os.environ.get(VOYAGE_BASE_URL)


def serve_store() -> str | None:
    """The store named in the environment; None when unset or empty (lexkb serve then keeps
    its store beside the index root)."""
    return os.environ.get(SERVE_STORE) or None


def mcp_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The token in `environ` (the process's environment when None); None when unset or empty."""
    return (os.environ if environ is None else environ).get(MCP_TOKEN) or None


def llm_url() -> str:
    """LEXKB_LLM_URL without surrounding spaces; "" when unset."""
    return os.environ.get(LLM_URL, "").strip()


def llm_model() -> str:
    return os.environ.get(LLM_MODEL, DEFAULT_LLM_MODEL)


def llm_api_key() -> str | None:
    return os.environ.get(LLM_API_KEY)


def llm_timeout() -> str:
    """LEXKB_LLM_TIMEOUT as written, stripped ("" when unset): lexkb.answers.external.llm checks it."""
    return os.environ.get(LLM_TIMEOUT, "").strip()


def brave_api_key() -> str | None:
    return os.environ.get(BRAVE_API_KEY)


def brave_search_url() -> str | None:
    return os.environ.get(BRAVE_SEARCH_URL)


def sources() -> list[str] | None:
    raw = os.environ.get(SOURCES)
    return raw.split(os.pathsep) if raw else None


def embedder() -> str:
    return os.environ.get(EMBEDDER, DEFAULT_EMBEDDER)


def dagster_home() -> str | None:
    return os.environ.get(DAGSTER_HOME)


def count(name: str, default: int) -> int:
    """The whole number of at least 1 in `name`, or `default` when it is unset or empty; a
    service stops at start on anything else rather than run on a default not chosen."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {raw!r}")
    return int(raw)


def seconds(name: str, default: float) -> float:
    """The positive, finite number of seconds in `name`, or `default` when it is unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number of seconds, not {raw!r}")
    return value
