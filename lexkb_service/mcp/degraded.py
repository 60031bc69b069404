"""What the tools do when the relevance model cannot be used: say so, and answer without it.

The relevance model (lexkb.core.judge.shipped) is read on first use and refused, rightly, when
its file is missing or is not the one shipped (its SHA-256 differs). The query module then
raised PairModelError out of a reranked search and of `extract` (a plain-text 500 from
lexkb serve, a failed MCP call), and `ask`, `evidence` and `check_question` went on without the
check that a source answers the question, saying nothing. Here each degrades to what it can do
without the model and carries a warning that names the model and why it was refused, so the
operator hears of a damaged install from its users' replies and its log, not from wrong
answers.

Whether the model can be used is found by loading it (`relevance_problem`); a refusal is kept
for as long as its file is unchanged (size, time, inode), so a damaged file is not read and
hashed again on every call, and a file put right is tried again at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from lexkb.answers.ranking.answered import is_question
from lexkb.core.judge.pairs import PairModelError
from lexkb.core.judge.shipped import relevance_model

log = logging.getLogger("lexkb_service.mcp")
_lock = threading.Lock()
_refused: tuple[tuple[int, int, int] | None, str] | None = None

RERANK_SKIPPED = "hits are in the search's own order, without `answers`"
EXTRACT_UNRANKED = "answers are in the search's order, not reordered by it"
ANSWERED_SKIPPED = (
    "the check that a paragraph found answers the question was skipped (scope and relevance "
    "judged alone)"
)


def reason(error: PairModelError) -> str:
    """Why the model was refused, naming its file but not where it lies on the server."""
    path = relevance_model().path
    return str(error).replace(str(path), path.name)


def warning(why: str, consequence: str) -> str:
    return f"the relevance model could not be used ({why}): {consequence}"


def _mark() -> tuple[int, int, int] | None:
    try:
        found = relevance_model().path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino


def relevance_problem() -> str | None:
    """Why the relevance model cannot be used now, or None when it can."""
    global _refused
    mark = _mark()
    with _lock:
        if _refused is not None and _refused[0] == mark:
            return _refused[1]
    try:
        relevance_model().probabilities([("Is it?", "It is.")])
    except PairModelError as exc:
        why = reason(exc)
        log.error("the relevance model cannot be used: %s", why)
        with _lock:
            _refused = (mark, why)
        return why
    with _lock:
        _refused = None
    return None


def without_model(call: Callable[[bool], Any], wanted: bool, consequence: str) -> Any:
    """`call(wanted)`, where `wanted` asks for the relevance model (a search's `rerank`); when
    the model is refused, `call(False)` with a warning of why added to its `warnings`."""
    try:
        return call(wanted)
    except PairModelError as exc:
        if not wanted:
            raise
        why = reason(exc)
        log.error("the relevance model cannot be used: %s", why)
    found = call(False)
    found.warnings.append(warning(why, consequence))
    return found


def noted(result: Any, question: str) -> Any:
    """`result` of ask, evidence or check_question, with a warning when `question` is one the
    relevance model would have read and the model cannot be used. An Answer is copied with the
    warning (the answer cache holds the original); a result without `warnings` is returned as
    its dict with them."""
    if not is_question(question):
        return result
    why = relevance_problem()
    if why is None:
        return result
    said = warning(why, ANSWERED_SKIPPED)
    if isinstance(getattr(result, "warnings", None), list):
        return replace(result, warnings=[*result.warnings, said])
    payload = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    return {**payload, "warnings": [*payload.get("warnings", []), said]}
