"""Clause types: the `clauses` table a real build writes for contracts, the `clause_type` search
filter over it, and zero-shot `classify` with the default types and with a caller's labels."""

from __future__ import annotations

import shutil

import pytest

from lexkb import Index
from lexkb.answers.classify import classify
from lexkb.answers.extract import extract
from lexkb.limits import QueryError
from tests.conftest import CORPUS

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"contract_index", "modelled_contract_index"}

CONTRACT = """MASTER SUPPLY AGREEMENT

This Master Supply Agreement (the "Agreement") is made as of May 2, 2022 by and between Fabrikam Components Inc., a Delaware corporation ("Supplier"), and Tailspin Aviation Ltd. ("Buyer").

1. SUPPLY

1.1 Supplier shall manufacture and deliver the products listed in Schedule 1 in the quantities Buyer orders.

2. PAYMENT

2.1 Buyer shall pay each invoice within thirty (30) days of receipt. Late payments bear interest at one percent (1%) per month.

3. TERM AND TERMINATION

3.1 Either party may terminate this Agreement for convenience on ninety (90) days' written notice to the other party.

4. NON-SOLICITATION

4.1 During the term and for twelve (12) months after it, neither party shall solicit for employment or hire any employee of the other party.

5. ASSIGNMENT

5.1 Neither party may assign or transfer this Agreement or any of its rights under it without the prior written consent of the other party.

6. GOVERNING LAW

6.1 This Agreement shall be governed by and construed in accordance with the laws of the State of New York, without regard to its conflict of laws rules.
"""


@pytest.fixture(scope="module")
def contract_index(tmp_path_factory):
    from pipelines.in_process import run_build

    sources = tmp_path_factory.mktemp("contracts")
    (sources / "master-supply-agreement.txt").write_text(CONTRACT, encoding="utf-8")
    shutil.copy(CORPUS / "records-retention-act.txt", sources)
    root = tmp_path_factory.mktemp("contract-index")
    run_build([sources], root, embedder="none")
    return Index.open(root)


def _paragraph(index: Index, words: str) -> str:
    return next(h.chunk_id for h in index.search(words, k=5, mode="keyword") if words in h.text)


def test_build_labels_contract_paragraphs_only(contract_index):
    law = _paragraph(contract_index, "governed by and construed")
    found = contract_index.search(
        "laws of which state", k=10, mode="keyword", filters={"clause_type": "governing law"}
    )
    assert found.hits and {h.document_key for h in found} == {"master-supply-agreement"}
    assert law in {h.chunk_id for h in found}
    assignment = contract_index.search(
        "transfer rights consent", mode="keyword", filters={"clause_type": "assignment"}
    )
    assert _paragraph(contract_index, "assign or transfer") in {h.chunk_id for h in assignment}
    # The act's paragraphs are never labelled, so no clause filter reaches them.
    for clause_type in ("termination", "payment terms", "governing law"):
        hits = contract_index.search(
            "records kept years", mode="keyword", filters={"clause_type": clause_type}
        )
        assert all(h.document_key == "master-supply-agreement" for h in hits)


def test_a_rebuild_embeds_only_the_contract_paragraphs_that_changed(contract_index, tmp_path):
    import polars as pl

    from lexkb.core.clauses.labels import sentences
    from transforms.indexing.vector_cache import VectorCache
    from transforms.structure.clauses import CACHE_NAME, clause_table
    from transforms.structure.ids import sha256_text

    def paragraphs(chunks: pl.DataFrame) -> set[str]:
        return set(
            chunks.filter(
                (pl.col("chunk_level") == "paragraph")
                & (pl.col("document_id").is_in(first["document_id"].unique().implode()))
            )["content"]
        )

    snapshot = contract_index.snapshot
    chunks = pl.read_parquet(snapshot.table_path("chunks"))
    documents = pl.read_parquet(snapshot.table_path("documents"))
    first = clause_table(chunks, documents, tmp_path)
    cache = VectorCache(tmp_path, CACHE_NAME)
    held = len(cache)
    # Every contract paragraph, and the first sentence of some read alone (labels.decide).
    texts = paragraphs(chunks)
    firsts = {sentences(text)[0] for text in texts if sentences(text)}
    assert all(sha256_text(text) in cache for text in texts)
    assert len(texts) <= held <= len(texts | firsts)
    # The labels are those of the same paragraphs embedded without a cache.
    uncached = clause_table(chunks, documents)
    assert sorted(first.select("chunk_id", "clause_type").rows()) == sorted(
        uncached.select("chunk_id", "clause_type").rows()
    )
    # The build had no embedder: it published the labels decided by the names said, and says so.
    published = pl.read_parquet(snapshot.table_path("clauses"))
    by_name = clause_table(chunks, documents, embed=False)
    assert sorted(by_name.rows()) == sorted(published.rows())
    assert set(published["method"]) == {"keyword: no embedder"}
    changed = chunks.with_columns(
        pl.when(pl.col("content").str.contains("pay each invoice"))
        .then(pl.col("content") + " Invoices are sent monthly.")
        .otherwise(pl.col("content"))
        .alias("content")
    )
    again = clause_table(changed, documents, tmp_path)
    (new,) = paragraphs(changed) - texts
    grown = len(VectorCache(tmp_path, CACHE_NAME)) - held
    assert sha256_text(new) in VectorCache(tmp_path, CACHE_NAME)
    assert 1 <= grown <= 1 + bool(sentences(new))  # the changed paragraph (and its first sentence)
    assert "payment terms" in set(again["clause_type"])


def test_a_keyword_only_build_has_no_topic_clusters(contract_index):
    assert contract_index.clusters() == []


def test_unknown_clause_type_is_refused_with_the_known_ones(contract_index):
    with pytest.raises(QueryError, match="governing law"):
        contract_index.search("law", filters={"clause_type": "governing lwa"})


def test_classify_finds_default_types_with_locations(contract_index):
    result = classify(contract_index, document="master-supply-agreement")
    by_type: dict[str, set[str]] = {}
    for clause in result.clauses:
        by_type.setdefault(clause.clause_type, set()).add(clause.chunk_id)
        assert clause.ref.startswith("Section") and clause.citation.casefold().startswith(
            "master supply"
        )
    assert _paragraph(contract_index, "governed by and construed") in by_type["governing law"]
    assert _paragraph(contract_index, "terminate this Agreement") in by_type["termination"]
    assert _paragraph(contract_index, "pay each invoice") in by_type["payment terms"]
    assert "force majeure" not in by_type  # the contract has none


def test_classify_takes_a_callers_own_labels_without_training(contract_index):
    labels = {"non-solicitation": "a party may not solicit or hire the other party's employees"}
    result = classify(contract_index, document="master-supply-agreement", clause_types=labels)
    assert {c.clause_type for c in result.clauses} == {"non-solicitation"}
    assert result.clauses[0].chunk_id == _paragraph(contract_index, "solicit for employment")
    with pytest.raises(QueryError):
        classify(contract_index, document="master-supply-agreement", clause_types={})
    with pytest.raises(QueryError, match="not both"):
        classify(contract_index)


def test_classify_names_cuad_categories_and_decides_them_with_fitted_heads(contract_index):
    result = classify(
        contract_index,
        document="master-supply-agreement",
        clause_types=["Anti-Assignment", "governing law", "rights of first refusal"],
    )
    assert result.methods == {
        "Anti-Assignment": "fitted",
        "governing law": "fitted",  # a default type that is also a CUAD category
        "rights of first refusal": "zero-shot",  # not a category's name
    }
    found = {(c.clause_type, c.chunk_id): c for c in result.clauses}
    assignment = found[("Anti-Assignment", _paragraph(contract_index, "assign or transfer"))]
    assert assignment.method == "fitted" and 0 < assignment.score <= 1
    assert ("governing law", _paragraph(contract_index, "governed by and construed")) in found
    # Fitted heads keep to their own clause: no payment or supply paragraph is an assignment.
    assert {c.chunk_id for c in result.clauses if c.clause_type == "Anti-Assignment"} == {
        assignment.chunk_id
    }
    # Described in the caller's own words, a category's name is a zero-shot label.
    own = classify(
        contract_index,
        document="master-supply-agreement",
        clause_types={"Anti-Assignment": "a party may not transfer the contract"},
    )
    assert own.methods == {"Anti-Assignment": "zero-shot"}
    # Where fitted labels answered, the result says what they learned from; else nothing.
    assert result.fitted_on.startswith("CUAD v1 (CC BY 4.0): 255 contracts")
    assert own.fitted_on is None


def test_every_fitted_category_at_once_and_in_the_builds_labels(contract_index):
    from lexkb.core.clauses.heads import clause_heads

    everything = classify(contract_index, document="master-supply-agreement", clause_types="cuad")
    heads = clause_heads()
    assert everything.methods == dict(zip(heads.names, heads.rules, strict=True))
    assert set(everything.methods.values()) == {"fitted", "keyword"}
    with pytest.raises(QueryError, match="cuad"):
        classify(contract_index, document="master-supply-agreement", clause_types="all")
    # The build labels contracts with the same heads, so the filter reaches the same paragraph.
    hits = contract_index.search(
        "consent", mode="keyword", filters={"clause_type": "anti-assignment"}
    )
    assert [h.chunk_id for h in hits] == [_paragraph(contract_index, "assign or transfer")]
    # A category no paragraph took is still a type the filter knows: no hits, not an error.
    assert not contract_index.search(
        "most favored", mode="keyword", filters={"clause_type": "most favored nation"}
    ).hits


@pytest.fixture(scope="module")
def modelled_contract_index(tmp_path_factory):
    """The contract built with the local model, whose labels a snapshot then records as the
    shipped model's."""
    from pipelines.in_process import run_build

    sources = tmp_path_factory.mktemp("modelled-contract")
    (sources / "master-supply-agreement.txt").write_text(CONTRACT, encoding="utf-8")
    root = tmp_path_factory.mktemp("modelled-contract-index")
    run_build([sources], root)
    return Index.open(root)


def test_classify_reads_the_builds_labels_where_the_shipped_model_decided_them(
    modelled_contract_index, monkeypatch
):
    import importlib

    from lexkb.core.clauses.labels import decider

    classifying = importlib.import_module("lexkb.answers.classify")  # the module, not the function

    index = modelled_contract_index
    assert index.snapshot.manifest["clause_model"] == decider()
    own_labels = {"non-solicitation": "a party may not solicit or hire the other party's employees"}
    for clause_types in ("cuad", None, ["Non-Compete", "governing law", "TERMINATION"], own_labels):
        read = classify(index, document="master-supply-agreement", clause_types=clause_types)
        with monkeypatch.context() as deciding_again:  # as a snapshot an older model labelled
            deciding_again.setattr(index, "clause_labels", lambda chunk_ids: None)
            decided = classify(index, document="master-supply-agreement", clause_types=clause_types)
        assert read.clauses and [(c.clause_type, c.chunk_id, c.method) for c in read.clauses] == [
            (c.clause_type, c.chunk_id, c.method) for c in decided.clauses
        ]
        assert [c.score for c in read.clauses] == pytest.approx(
            [c.score for c in decided.clauses], abs=1e-3
        )

    # The build's labels answer the labels it decided: the model is not asked again ...
    def refused(*args, **kwargs):
        raise AssertionError("decided again")

    monkeypatch.setattr(classifying, "decide", refused)
    everything = classify(index, document="master-supply-agreement", clause_types="cuad")
    assert ("TERMINATION", _paragraph(index, "terminate this Agreement")) in {
        (c.clause_type, c.chunk_id)
        for c in classify(
            index, document="master-supply-agreement", clause_types=["TERMINATION"]
        ).clauses
    }
    assert {c.method for c in everything.clauses} <= {"fitted", "keyword"}
    # ... but a label described otherwise, or another zero-shot floor, is decided at query time.
    with pytest.raises(AssertionError, match="decided again"):
        classify(index, document="master-supply-agreement", clause_types=own_labels)
    with pytest.raises(AssertionError, match="decided again"):
        classify(index, document="master-supply-agreement", min_score=0.6)
    # Labels recorded as decided by other heads, or by names alone, are not read.
    paragraphs = [h.chunk_id for h in index.search("agreement", k=20, mode="keyword")]
    assert (
        index.annotations.clause_labels(paragraphs, {**decider(), "heads_sha256": "0" * 64}) is None
    )


def test_a_build_without_a_model_has_its_contracts_classified_at_query_time(contract_index):
    assert "clause_model" not in contract_index.snapshot.manifest
    assert contract_index.clause_labels([_paragraph(contract_index, "assign or transfer")]) is None
    found = classify(
        contract_index, document="master-supply-agreement", clause_types=["Anti-Assignment"]
    )
    assert [c.method for c in found.clauses] == ["fitted"]


def test_heads_fitted_on_another_models_vectors_are_refused(monkeypatch):
    from lexkb.core.clauses.heads import clause_heads
    from lexkb.core.embed.embedders import LocalEmbedder

    monkeypatch.setattr(LocalEmbedder, "name", "another-model")
    clause_heads.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="refit"):
            clause_heads()
    finally:
        clause_heads.cache_clear()


def _said_at_its_offsets(contract_index: Index, answer) -> bool:
    return contract_index.hit(answer.chunk_id).text[answer.start : answer.end] == answer.text


def test_extract_answers_a_date_question_with_the_date_written_at_the_head(contract_index):
    result = extract(
        contract_index, "What is the date of the agreement?", document="master-supply-agreement"
    )
    first = result.answers[0]
    assert (first.kind, first.text) == ("date", "May 2, 2022")
    assert _said_at_its_offsets(contract_index, first)
    assert all(a.kind == "sentence" for a in result.answers[1:])


def test_extract_answers_title_and_parties_with_what_the_text_says(contract_index):
    title = extract(
        contract_index, "What is the name of the contract?", document="master-supply-agreement"
    ).answers[0]
    # The catalog's title, where the text first writes it (in any case).
    assert (title.kind, title.text.casefold()) == ("title", "master supply agreement")
    assert _said_at_its_offsets(contract_index, title)
    parties = extract(
        contract_index,
        "Who are the parties to this agreement?",
        document="master-supply-agreement",
        k=5,
    ).answers
    named = [a.text for a in parties if a.kind == "party"]
    listed = next(
        d for d in contract_index.documents() if d["document_key"] == "master-supply-agreement"
    )
    assert named and set(named) <= set(listed["parties"])
    assert all(_said_at_its_offsets(contract_index, a) for a in parties)


def test_a_date_question_the_text_has_no_date_for_gets_sentences_only(contract_index):
    result = extract(
        contract_index,
        "When may a party terminate for convenience?",
        document="master-supply-agreement",
    )
    assert result.answers and all(a.kind == "sentence" for a in result.answers)
    assert "terminate" in result.answers[0].text


def test_extract_puts_first_the_paragraphs_labelled_with_the_clause_type_named(contract_index):
    question = "What needs the prior written consent of the other party?"
    contract = {"document": "master-supply-agreement", "min_relevance": 0.0}
    terminate = _paragraph(contract_index, "terminate this Agreement")
    plain = extract(contract_index, question, **contract)
    named = extract(contract_index, question, clause_type="termination", **contract)
    assert plain.answers[0].chunk_id != terminate  # the words match another clause better
    assert named.answers[0].chunk_id == terminate
    assert "labelled 'termination' first" in named.reason and not named.warnings
    assert [a.chunk_id for a in named.answers[1:]] == [
        a.chunk_id for a in plain.answers if a.chunk_id != terminate
    ][: len(named.answers) - 1]


def test_a_clause_type_no_paragraph_carries_is_said_not_pretended(contract_index):
    contract = {"document": "master-supply-agreement", "min_relevance": 0.0}
    question = "Is the source code held in escrow?"
    plain = extract(contract_index, question, **contract)
    named = extract(contract_index, question, clause_type="Source Code Escrow", **contract)
    assert named.warnings == [
        *plain.warnings,
        "no paragraph of document 'master-supply-agreement' is labelled 'Source Code Escrow': "
        "answers from its search",
    ]
    assert "labelled" not in named.reason
    assert [a.chunk_id for a in named.answers] == [a.chunk_id for a in plain.answers]
    with pytest.raises(QueryError, match="unknown clause_type"):
        extract(contract_index, question, clause_type="escrowed code", **contract)
    hits = contract_index.search(question, k=3)
    with pytest.raises(QueryError, match="filtered by clause_type"):
        extract(contract_index, question, hits=hits.hits, clause_type="termination")


def test_a_date_cut_from_a_sentence_follows_that_sentence():
    from lexkb.answers.extract import _span, sentence_date
    from lexkb.answers.passages.typed import kind_asked
    from lexkb.results import Hit

    text = "The initial term shall continue until December 31, 2024 unless terminated earlier."
    hit = Hit("c1", "msa", "MSA", "paragraph", "3.1", [], None, 1.0, text, relevance=0.9)
    ranked = [(hit, 0, len(text), 1.2)]
    sentence = _span(hit, 0, len(text), 1.2, 0.9, "sentence")
    dated = sentence_date(
        kind_asked("On what date will the initial term expire?"), ranked, [sentence]
    )
    assert (dated.kind, dated.text) == ("date", "December 31, 2024")
    assert text[dated.start : dated.end] == dated.text and dated.confidence == 0.9
    assert sentence_date(kind_asked("What law governs the agreement?"), ranked, [sentence]) is None


def test_a_clause_is_labelled_by_its_first_sentence_when_the_second_blurs_it():
    from lexkb.core.clauses.labels import build_types, decide

    # The NDA's clause 4.10 (../shared/data/realdocs/nda.pdf): read whole, the second sentence
    # pulls the governing-law head under its threshold.
    clause = (
        "4.10. The present Agreement is construed in accordance with the Laws of Greece the place"
        " of jurisdiction shall be in Athens. If the English or American legal meaning differs"
        " from the Greek legal meaning of this Agreement and its terms, the Greek legal meaning"
        " shall prevail."
    )
    other = "The Supplier shall deliver the goods within thirty days of each purchase order."
    labels = build_types()
    table, taken = decide([clause, other], labels)
    column = list(labels).index("governing law")
    assert taken[0, column] and not taken[1, column]


def test_a_paragraph_of_no_word_takes_no_label():
    from lexkb.core.clauses.labels import build_types, decide

    # CUAD's redaction marks and a drawn line: the heads fitted before their labels were
    # cleaned put "[*]" at 0.99 Non-Compete.
    texts = ["[*]", "[**]", "-" * 40, "(a)", "Neither party shall compete with the other."]
    table, taken = decide(texts, build_types())
    assert not taken[:4].any() and not table[:4].any()


def test_a_heads_file_other_than_the_shipped_one_is_refused(monkeypatch, tmp_path):
    from lexkb.core.clauses import heads

    changed = tmp_path / "cuad_clauses.npz"
    changed.write_bytes(heads.MODEL_PATH.read_bytes() + b"\0")
    monkeypatch.setattr(heads, "MODEL_PATH", changed)
    heads.clause_heads.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="SHA-256"):
            heads.clause_heads()
    finally:
        heads.clause_heads.cache_clear()


def test_a_drawn_line_or_a_redaction_overlaps_no_marked_clause():
    from evaluation_data.cuad import overlaps, squeeze

    clause = squeeze("The Distributor shall not sell [*] products of any competitor ---------- .")
    assert overlaps(
        clause, squeeze("The Distributor shall not sell [*] products of any competitor")
    )
    # Squeezed, a line is nothing and "[*]" three characters: both occur in every redacted
    # clause, and once made every clause of their contract a positive of its category.
    assert not overlaps(clause, squeeze("-" * 40))
    assert not overlaps(clause, squeeze("[*]"))
