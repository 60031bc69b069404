"""What a rebuild keeps from the last one: citation readings and BM25 terms by content hash.

A kept value must be used when its text is unchanged (else the cache saves nothing), never when
the text or the code reading it changed, and a damaged cache file must cost only the time."""

from pathlib import Path

import polars as pl

from lexkb.core.text.citations import Parsed
from transforms.edges import citation_cache
from transforms.edges.resolve import build_edges, grammar_names
from transforms.indexing.bm25 import build_bm25, terms_by_hash, tokens_of
from transforms.publishing.workdir import REPO, WorkDir, code_files


def _tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    texts = [
        ("18.5", "section", "Segregation"),
        ("18.5.1", "paragraph", "A firm must segregate client money."),
        ("18.5.2", "paragraph", "Reconcile daily, see Rule 18.5.1."),
    ]
    chunks = pl.DataFrame(
        {
            "chunk_id": [f"c{i}" for i in range(len(texts))],
            "document_id": ["d"] * len(texts),
            "chunk_level": [level for _, level, _ in texts],
            "ref": [ref for ref, _, _ in texts],
            "content": [text for _, _, text in texts],
            "content_hash": [f"h{i}" for i in range(len(texts))],
        }
    )
    documents = pl.DataFrame(
        {
            "document_id": ["d"],
            "document_key": ["rulebook"],
            "title": ["Rulebook"],
            "short_name": [None],
            "aliases": [[]],
            "refers_to": [[]],
        },
        schema_overrides={
            "short_name": pl.String,
            "aliases": pl.List(pl.String),
            "refers_to": pl.List(pl.String),
        },
    )
    return chunks, documents


def test_kept_readings_are_used_and_hold_exactly_the_current_paragraphs():
    chunks, documents = _tables()
    fresh = build_edges(chunks, documents)
    readings: dict[str, Parsed] = {"gone": Parsed([], [])}
    assert build_edges(chunks, documents, None, readings).equals(fresh)
    assert set(readings) == {"h1", "h2"}  # paragraphs only; the stale entry is dropped
    assert readings["h2"].citations[0].text == "Rule 18.5.1"
    # A kept reading stands for its text: an empty one for h2 means h2 cites nothing.
    readings["h2"] = Parsed([], [])
    assert build_edges(chunks, documents, None, readings).is_empty()


def test_readings_survive_a_round_trip_and_only_under_their_grammar(tmp_path: Path):
    chunks, documents = _tables()
    readings: dict[str, Parsed] = {}
    build_edges(chunks, documents, None, readings)
    stamp = citation_cache.grammar_stamp(grammar_names(documents, {}))
    citation_cache.save(tmp_path, stamp, readings)
    assert citation_cache.load(tmp_path, stamp) == readings
    other = citation_cache.grammar_stamp([*grammar_names(documents, {}), "Other Act"])
    assert other != stamp and citation_cache.load(tmp_path, other) == {}
    (tmp_path / citation_cache.FILE).write_text('{"stamp": "', encoding="utf-8")
    assert citation_cache.load(tmp_path, stamp) == {}


def test_kept_terms_give_the_same_bm25_tables_and_changed_texts_are_tokenized_again():
    texts = ["Client money must be segregated.", "Records are kept for six years.", ""]
    hashes = ["a", "b", "c"]
    fresh = build_bm25(texts)
    kept = terms_by_hash(hashes, tokens_of(texts))
    again = build_bm25(texts, terms_of_rows=tokens_of(texts, hashes, kept))
    assert all(x.equals(y) for x, y in zip(fresh, again, strict=True))
    # Text b changed (a new hash): its old terms must not be used.
    changed = [texts[0], "Records are kept for ten years.", texts[2]]
    terms = tokens_of(changed, ["a", "b2", "c"], kept)
    assert "ten" in terms[1].to_list() and "six" not in terms[1].to_list()
    assert terms[0].to_list() == kept["terms"][0].to_list()


def test_a_damaged_terms_file_is_ignored(tmp_path: Path):
    work = WorkDir(tmp_path)
    work.path.mkdir()
    assert work.kept_tokens() is None
    work.keep_tokens(terms_by_hash(["a"], tokens_of(["client money"])))
    assert work.kept_tokens()["terms"].to_list() == [["client", "money"]]
    work.tokens.write_bytes(b"PAR1 not parquet")
    assert work.kept_tokens() is None


def test_a_part_is_keyed_by_every_module_it_is_built_by():
    """A change to the tokenizer, the references, the snapshot's schema or any stage of the
    transforms makes every cached part stale; a part built by other code is never reused."""
    built_by = {str(path.relative_to(REPO)) for path in code_files()}
    assert {
        "lexkb/core/text/tokenize.py",
        "lexkb/core/text/refs.py",
        "lexkb/core/store/schema.py",
        "transforms/structure/contracts.py",
        "transforms/reading/legal_xml/uslm.py",
        "transforms/structure/numbering/contract.py",
    } <= built_by
    assert not any(name.startswith(("lexkb/answers/", "tests/")) for name in built_by)
