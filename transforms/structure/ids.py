"""Stable identifiers: the same document, reference and position always give the same id.

Ids derive from what a citation means (source file, document key, paragraph ref), never from
random numbers or build time, so two builds of the same corpus agree and a service can keep ids.
"""

from __future__ import annotations

import hashlib

_SEP = "\x1f"


def _digest(*parts: object, length: int) -> str:
    return hashlib.sha256(_SEP.join(str(p) for p in parts).encode("utf-8")).hexdigest()[:length]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_id(source_key: str, document_key: str) -> str:
    return "doc-" + _digest(source_key, document_key, length=16)


def section_id(doc_id: str, sequence: int) -> str:
    return "sec-" + _digest(doc_id, sequence, length=16)


def chunk_id(doc_id: str, ref_key: str, occurrence: int) -> str:
    """`ref_key` is the paragraph ref, or "#<position>" for a paragraph without one."""
    return "chk-" + _digest(doc_id, ref_key, occurrence, length=20)
