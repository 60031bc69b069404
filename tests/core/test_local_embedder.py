"""The default local embedder (MiniLM int8 on onnxruntime) and the hybrid search built on it."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from assets.resources import EmbedderSettings
from lexkb import Index, fusion
from lexkb.core.embed import embedders
from lexkb.core.embed.embedders import EmbedderError, LocalEmbedder, VoyageEmbedder
from lexkb.core.store import snapshot as snap
from lexkb.fusion import FUSION_DEPTH
from tests.support.voyage_fake import KEY
from transforms.indexing.chunk_embeddings import paragraph_lines

PASSAGES = [
    "A PFP Operator offering an exit facility must tell its clients how the facility works.",
    "Client money must be held in a segregated account at an eligible bank.",
    "The auditor shall document the reconciliations inspected.",
    "Records must be kept for six years from the date they were made.",
]


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


def test_vectors_are_unit_length_and_keep_input_order(local):
    batched = local.embed_documents(PASSAGES)
    assert batched.shape == (4, 384) and batched.dtype == np.float32
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    # Texts are batched by length; each vector must still land on its own text.
    one_by_one = np.vstack([local.embed_documents([p]) for p in PASSAGES])
    assert np.allclose(batched, one_by_one, atol=1e-4)
    assert np.allclose(local.embed_query(PASSAGES[2]), batched[2], atol=1e-4)


def test_a_paraphrased_question_finds_its_passage(local):
    vectors = local.embed_documents(PASSAGES)
    for question, expected in (
        ("what must a platform operator disclose about leaving an investment early", 0),
        ("where should a firm keep its customers' funds", 1),
        ("how long do we need to retain our files", 3),
    ):
        assert int(np.argmax(vectors @ local.embed_query(question))) == expected


def test_a_model_file_that_does_not_match_its_hash_is_refused(tmp_path, monkeypatch):
    model, tokenizer, sha256 = embedders.local_model_files()
    damaged = tmp_path / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(embedders, "local_model_files", lambda: (damaged, tokenizer, sha256))
    with pytest.raises(EmbedderError, match="does not match its published SHA-256"):
        LocalEmbedder().embed_query("client money")


def test_embedders_of_one_process_share_a_started_session(local):
    """A build starts the session while its files parse (assets.warmup) and the embeddings
    step's own embedder must find it started; a query embedder's (integer) session differs."""
    local.warm()
    again = LocalEmbedder()
    again.warm()
    assert again._session is local._session
    serving = LocalEmbedder(serving=True)
    serving.warm()
    assert serving._session is not local._session


def test_settings_choose_the_embedder(monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    assert isinstance(EmbedderSettings().build(), LocalEmbedder)
    assert EmbedderSettings(provider="none").build() is None
    with pytest.raises(EmbedderError, match="VOYAGE_API_KEY is not set"):
        EmbedderSettings(provider="voyage").build()
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    assert isinstance(EmbedderSettings().build(), VoyageEmbedder)
    assert isinstance(EmbedderSettings(provider="local").build(), LocalEmbedder)
    with pytest.raises(ValueError, match="unknown embedder provider"):
        EmbedderSettings(provider="openai").build()


def test_the_default_build_is_hybrid_with_the_local_model(built_root, index, monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    assert snap.load(built_root).manifest["embedder"]["name"] == LocalEmbedder.name
    results = index.search("how long must a firm keep its records", k=5)
    assert results.mode == "hybrid" and not results.warnings
    assert any(h.ref == "4.4.1" for h in results)
    assert (
        Index.open(built_root, embedder=LocalEmbedder()).query_embedder.name == LocalEmbedder.name
    )
    with pytest.raises(snap.SnapshotError, match="a query embedder voyage:voyage-law-2"):
        monkeypatch.setenv("VOYAGE_API_KEY", KEY)
        Index.open(built_root, embedder=VoyageEmbedder())


def test_fusion_standardises_each_ranking_over_their_candidates():
    keyword = np.zeros(1000)
    dense = np.zeros(1000)
    keyword[:300] = np.linspace(10, 1, 300)  # row 0 best by keyword
    dense[:] = np.linspace(0, 1, 1000)  # row 999 best by vector
    dense[5] = 2.0  # row 5: best by vector and near the top by keyword
    every = np.arange(1000)
    rows = fusion.candidates(fusion.best(keyword, FUSION_DEPTH), every, dense)
    assert set(rows.tolist()) == set(range(FUSION_DEPTH)) | set(range(801, 1000)) | {5}
    # Told which rows the dense side scored, the fusion reads only those.
    scored = np.concatenate([[5], np.arange(500, 1000)])
    assert np.array_equal(
        fusion.candidates(fusion.best(keyword, FUSION_DEPTH), scored, dense[scored]), rows
    )
    fused = fusion.fuse(keyword[rows], dense[rows])
    assert rows[int(np.argmax(fused))] == 5
    assert (fused > 0).all()
    # Outside both candidate lists nothing is fused, however good its other score.
    assert 250 not in rows and keyword[250] > 0


def test_only_paragraphs_of_several_substantial_lines_are_split():
    listed = "A firm must give:\n(a)\tthe fees it charges for custody;\n(b)\tits complaints policy."
    assert paragraph_lines(listed) == [
        "(a)\tthe fees it charges for custody;",
        "(b)\tits complaints policy.",
    ]
    assert paragraph_lines("One line of text that is long enough.") == []
    assert paragraph_lines("Heading\n(a)\nThe only line of substance here.") == []


def test_a_list_paragraph_scores_its_best_line(built_root, index):
    lines = pl.read_parquet(snap.load(built_root).table_path("line_embeddings"))
    chunk_id = lines.filter(pl.col("line") >= 1)["chunk_id"][0]  # line 0: its heading vector
    row = index.tables.by_id[chunk_id]
    hit = index.lookup(chunk_id).hit
    line = paragraph_lines(hit.text)[1]
    query = index.query_embedder.embed_query(line)
    scores = index.dense_scores(line)
    own = np.vstack(lines.filter(pl.col("chunk_id") == chunk_id)["vector"].to_list()) @ query
    whole = float(index.query_embedder.embed_documents([hit.text])[0] @ query)
    # The paragraph scores as its best line, which asking for that line puts well above its
    # whole vector.
    assert scores[row] == pytest.approx(max(own.max(), whole), abs=1e-4)
    assert own.max() > whole + 0.05


LIST = (
    "A firm must give each client, before it provides custody services:\n"
    "(a) the fees it charges for holding client assets;\n"
    "(b) its policy on handling complaints about custody;\n"
    "(c) the name of the bank that holds the client's money;\n"
    "(d) how it reconciles client money records every day."
)


def test_line_spans_locate_the_lines_in_the_paragraph():
    from transforms.indexing.chunk_embeddings import line_spans

    spans = line_spans(LIST)
    assert [LIST[a:b] for a, b in spans] == paragraph_lines(LIST)
    assert len(spans) == 5 and spans[1][0] == LIST.index("(a)")


def test_pooled_lines_come_from_the_paragraphs_own_pass(local):
    from transforms.indexing.chunk_embeddings import line_spans

    spans = line_spans(LIST)
    vectors, pooled = local.embed_with_spans([LIST, PASSAGES[0]], [spans, []])
    assert np.allclose(vectors, local.embed_documents([LIST, PASSAGES[0]]), atol=1e-5)
    assert pooled[1] == []
    alone = local.embed_documents(paragraph_lines(LIST))
    stacked = np.vstack(pooled[0])
    assert np.allclose(np.linalg.norm(stacked, axis=1), 1.0, atol=1e-5)
    # Pooled lines carry their paragraph's context, but each stays close to its line alone,
    # and a question about one item finds that item's line above the whole paragraph.
    assert (np.diag(stacked @ alone.T) > 0.65).all()
    query = local.embed_query("which bank holds the client money")
    assert int(np.argmax(stacked @ query)) == 3
    assert float(stacked[3] @ query) > float(vectors[0] @ query) + 0.05
    # A line past the model's 256-token window is read in the next window, not dropped.
    long_text = LIST + "\n" + " ".join(["custody"] * 300) + "\n(e) the last line, out of reach."
    first, far = local.embed_with_spans([long_text], [line_spans(long_text)])
    assert np.allclose(first[0], local.embed_documents([long_text])[0], atol=1e-5)
    last = far[0][-1]
    assert last is not None
    assert float(last @ local.embed_documents(["(e) the last line, out of reach."])[0]) > 0.5


def test_one_pass_gives_lines_and_parts_their_vectors(local, tmp_path):
    from transforms.indexing.chunk_embeddings import embed_chunks, line_spans
    from transforms.structure.chunks import split_parts
    from transforms.structure.ids import sha256_text

    long_text = LIST + "\n" + " ".join(["custody"] * 300) + "\n(e) the last line, out of reach."
    sentences = " ".join(
        f"Rule {n}. A firm must keep record {n} of its client money reconciliations for six years."
        for n in range(40)
    )
    parts = split_parts(sentences)
    assert len(parts) > 1
    rows = [("p1", "paragraph", LIST, None), ("p2", "paragraph", long_text, None)]
    rows += [("p3", "paragraph", sentences, None)]
    rows += [(f"p3#{n}", "part", part, "p3") for n, part in enumerate(parts)]
    chunks = pl.DataFrame(
        {
            "chunk_id": [r[0] for r in rows],
            "chunk_level": [r[1] for r in rows],
            "content": [r[2] for r in rows],
            "content_hash": [sha256_text(r[2]) for r in rows],
            "parent_chunk_id": [r[3] for r in rows],
        }
    )
    table, lines, first = embed_chunks(chunks, local, tmp_path)
    assert lines.height == len(line_spans(LIST)) + len(line_spans(long_text))
    # Every line and part came from its paragraph's pass: the model read three texts.
    assert first["lines_pooled"] == lines.height and first["parts_pooled"] == len(parts)
    assert first["embedded"] == 3
    vectors = dict(zip(table["chunk_id"], table["vector"].to_list(), strict=True))
    alone = local.embed_documents(parts)
    for n in range(len(parts)):
        assert float(np.asarray(vectors[f"p3#{n}"]) @ alone[n]) > 0.8
    _, again_lines, again = embed_chunks(chunks, local, tmp_path)
    assert again["embedded"] == 0 and again["reused"] > first["reused"]
    assert again_lines.equals(lines)


def test_parts_are_found_in_their_paragraph():
    from transforms.indexing.chunk_embeddings import part_spans
    from transforms.structure.chunks import split_parts

    text = "First rule applies.  It is long.\nSecond rule: it is longer still. Third (a) item."
    parts = split_parts(text, limit=30)
    spans = part_spans(text, parts)
    assert all(span is not None for span in spans)
    assert [" ".join(text[a:b].split()) for a, b in spans] == [" ".join(p.split()) for p in parts]
    assert part_spans(text, ["Not in the paragraph."]) == [None]


def test_a_paragraph_under_a_heading_gets_a_heading_vector(local, tmp_path):
    from transforms.indexing.chunk_embeddings import HEADING_LINE, embed_chunks
    from transforms.structure.ids import sha256_text

    text = "An individual guilty of an offence under section 1, 2 or 6 is liable to a fine."
    chunks = pl.DataFrame(
        {
            "chunk_id": ["p1", "p2"],
            "chunk_level": ["paragraph", "paragraph"],
            "content": [text, text + " Again."],
            "content_hash": [sha256_text(text), sha256_text(text + " Again.")],
            "parent_chunk_id": [None, None],
            "section_path": [["General bribery offences", "11 Penalties"], None],
        }
    )
    _, lines, _ = embed_chunks(chunks, local, tmp_path)
    headed = lines.filter(pl.col("line") == HEADING_LINE)
    assert headed["chunk_id"].to_list() == ["p1"]  # p2 has no heading path
    question = local.embed_query("What are the penalties for bribery?")
    own = local.embed_documents([text])[0]
    assert float(np.asarray(headed["vector"][0]) @ question) > float(own @ question)
