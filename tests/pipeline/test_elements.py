"""Parsing real files offline: unstructured must return elements without downloading anything."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import CORPUS, REPO, shared_file
from transforms.reading.elements import SourceError, document_elements
from transforms.reading.source_files import discover


def _source(path):
    return discover([path])[0]


def test_no_spacy_model_package_is_installed():
    # The pipeline must work without en_core_web_sm; if it were installed this test would not
    # prove that partitioning runs offline.
    assert importlib.util.find_spec("en_core_web_sm") is None


def test_the_parse_server_loads_once_what_every_partition_would_load():
    """Each file parses in a worker forked from the parse server; what the server loads (the
    sentence pipeline, langdetect's profiles) its workers start with, and what it does not, each
    worker loads again (1.6 s a DOCX, Markdown or HTML file). Only corpora with such files pay."""
    from transforms.reading.isolation import preloaded

    assert "transforms.reading.parse_preload" in preloaded({"docx", "passages"})
    assert not any("unstructured" in m or "preload" in m for m in preloaded({"passages", "pdf"}))
    code = (
        "import transforms.reading.parse_preload\n"
        "from langdetect import detector_factory\n"
        "import unstructured.nlp.tokenize as t\n"
        "from transforms.reading import offline_nlp\n"
        "assert detector_factory._factory is not None\n"
        "assert t._get_nlp is offline_nlp._blank_english\n"
        "assert offline_nlp._blank_english.cache_info().currsize == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


@pytest.mark.parametrize(
    "name", ["lsa-230-audit-documentation.pdf", "lrb-chapter-4-client-assets.docx"]
)
def test_sample_pdf_and_docx_yield_elements(name):
    frame = document_elements(_source(CORPUS / name))
    assert frame.height > 10
    assert frame["text"].str.contains("auditor|Client Money").any()


def test_pdf_elements_carry_page_numbers():
    frame = document_elements(_source(CORPUS / "lsa-230-audit-documentation.pdf"))
    assert set(frame["page"].drop_nulls().to_list()) == {1, 2}


def test_real_multi_page_pdf_yields_elements():
    frame = document_elements(_source(shared_file("samples", "multi_page.pdf")))
    assert frame.height > 0
    assert frame["page"].max() > 1


def test_passage_file_objects_become_elements(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"DocumentID": 7, "PassageID": "1.2", "Passage": "Text."}]))
    frame = document_elements(_source(path))
    assert frame.row(0, named=True)["document_key"] == "7"
    assert frame.row(0, named=True)["ref"] == "1.2"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("broken.pdf", b"%PDF-1.7 this is not really a pdf", ""),
        ("broken.docx", b"PK\x03\x04 not a zip", ""),
        ("bad.json", b'[{"text": ', "invalid JSON at line 1"),
        ("bad.jsonl", b'{"text": "a"}\n{oops}\n', "line 2"),
        ("empty.md", b"   \n", "no text"),
    ],
)
def test_broken_files_raise_a_readable_reason(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SourceError) as caught:
        document_elements(_source(path))
    assert reason in str(caught.value)
    assert str(caught.value).strip()
