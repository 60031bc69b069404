"""Keep unstructured from downloading a spaCy model at run time.

unstructured 0.27.32 loads `en_core_web_sm` on first use and, when it is missing, downloads it:
offline, `partition_docx` raises and `partition_pdf(strategy="fast")` returns no elements at all.
We ship no third-party model. Instead unstructured gets a blank English pipeline with spaCy's
rule-based sentencizer, built from spaCy's own code. It splits sentences as unstructured needs;
with no tagger, element categories lean to Text over NarrativeText, which lexkb does not rely on:
its structure comes from the documents' numbering.
"""

from __future__ import annotations

import os
from functools import lru_cache

TELEMETRY_OFF = {
    "DO_NOT_TRACK": "1",
    "SCARF_NO_ANALYTICS": "true",
    "UNSTRUCTURED_DISABLE_NOTICE": "1",
    "HF_HUB_OFFLINE": "1",
}


@lru_cache(maxsize=1)
def _blank_english():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def install() -> None:
    """Idempotent; call before any unstructured partition function."""
    for name, value in TELEMETRY_OFF.items():
        os.environ.setdefault(name, value)
    import unstructured.nlp.tokenize as unstructured_tokenize

    unstructured_tokenize._get_nlp = _blank_english


def warm() -> None:
    """Load now what unstructured loads on its first partition: the sentence pipeline (0.6 s)
    and langdetect's language profiles (1 s, read from 55 JSON files). The parse server calls
    this once (transforms.reading.parse_preload), so each file's worker, forked from it, starts with them
    instead of paying 1.6 s a DOCX, Markdown or HTML file."""
    from langdetect.detector_factory import init_factory

    install()
    _blank_english()
    init_factory()
