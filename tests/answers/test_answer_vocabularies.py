"""The results carry the closed vocabularies (lexkb.core.vocabulary) as members, not bare strings,
and still serialise as the strings the JSON schemas name."""

from __future__ import annotations

import json

from lexkb.answers.ask import ask
from lexkb.core.vocabulary import (
    UNCITED,
    AbstentionReason,
    AnswerMode,
    ChunkLevel,
    MatchKind,
    Verdict,
)
from tests.answers.test_ask import RETENTION_QUESTION
from tests.service.test_cli_json import _validate, registry  # noqa: F401  (the fixture)


def test_an_answer_carries_its_mode_and_verdicts_as_vocabulary_members(index, registry):  # noqa: F811
    answer = ask(index, RETENTION_QUESTION, cache=None)
    assert type(answer.mode) is AnswerMode and answer.mode != AnswerMode.ABSTAIN
    assert answer.sentences and all(
        type(s.verdict) is Verdict or s.verdict == UNCITED for s in answer.sentences
    )
    data = json.loads(json.dumps(answer.to_dict()))
    assert data["mode"] in ("DIRECT", "QUALIFIED") and type(data["mode"]) is str
    _validate(registry, "ask", data)


def test_an_abstention_names_its_reason_from_the_vocabulary(index, registry):  # noqa: F811
    refused = ask(index, "What will the regulator change next year?", cache=None)
    assert refused.mode is AnswerMode.ABSTAIN
    assert refused.abstention_reason is AbstentionReason.PREDICTIVE
    out = ask(index, "What is the penalty for speeding on a German autobahn?", cache=None)
    assert out.abstention_reason is AbstentionReason.OUT_OF_SCOPE
    data = json.loads(json.dumps(out.to_dict()))
    assert (data["mode"], data["abstention_reason"]) == ("ABSTAIN", "out_of_scope")
    _validate(registry, "ask", data)


def test_hits_and_lookups_carry_their_level_and_match_as_members(index):
    hit = index.search(RETENTION_QUESTION, k=1).hits[0]
    assert type(hit.chunk_level) is ChunkLevel
    assert json.loads(json.dumps(hit.to_dict()))["chunk_level"] == hit.chunk_level.value
    lookup = index.lookup(hit.chunk_id)
    assert lookup.match is MatchKind.EXACT and type(lookup.hit.chunk_level) is ChunkLevel
