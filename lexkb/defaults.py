"""The default of every tool argument that has one, written once.

The request models (lexkb.requests) carry them, with their bounds, into MCP's tool schemas and
the JSON API's bodies. `Index`, the answer tools and the CLI read the same names from here: they
load without pydantic, and the models' types sit above `Index` and lexkb.answers.
tests/test_request_models.py holds every surface to the models.
"""

from __future__ import annotations

SEARCH_LIMIT = 10  # hits a search returns
DECAY = 0.7  # score a paragraph keeps per citation edge: hop, and search's expansion
HOP_MAX_HOPS = 2  # edges a hop walks at most
HOP_LIMIT = 20  # paragraphs a hop returns
CONTEXT_TOKENS = 8000  # format_context's budget, in cl100k_base tokens
ENTITY_THRESHOLD = 0.80  # share of entities found for verify_entities to pass
CITATION_THRESHOLD = 0.75  # share of claims supported for verify_citations to pass
RELATION_THRESHOLD = 0.70  # share of relations confirmed for verify_relations to pass
RELATION_MAX_HOPS = 1  # path length a stated relation may take
WEB_RESULTS_PER_QUERY = 5  # web results kept per query
EXTRACT_LIMIT = 3  # answer spans extract returns
PAGE = 100  # items a page of a listing holds at most, and by default (HTTP API, client)
