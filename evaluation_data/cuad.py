"""CUAD inputs shared by the contract benchmarks and training: files, lawyer-marked clauses,
categories, and when a paragraph overlaps a marked clause.

`master_clauses-dev.csv` holds, per contract and per category, the clause texts lawyers marked
(a Python-style list of strings) and an answer column. Its `Filename` matches a `txt/` or `pdf/`
file after lower-casing and keeping letters and digits (CUAD's README says so).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

csv.field_size_limit(1 << 30)

# Columns of the CSV that are not categories of clauses.
_NOT_CATEGORIES = {"Filename"}
# Runs of dashes or underscores are underlines and rules a text rendering drew, not words.
_RULE = re.compile(r"[-_]{3,}")
# A paragraph and a clause overlap when the first this many characters of one occur in the other.
OVERLAP_CHARS = 60
# ... and neither is shorter than this, squeezed: a drawn line squeezes to nothing and "[*]" (a
# redaction) occurs in every redacted clause, so either would overlap every clause of its
# contract, and a classifier that labels lines would find them all.
MIN_OVERLAP_CHARS = 10
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})


def contract_key(name: str) -> str:
    """The key CUAD's file names and CSV rows share."""
    stem = name.rsplit(".", 1)[0] if name.lower().endswith((".pdf", ".txt")) else name
    return re.sub(r"[^a-z0-9]", "", stem.casefold())


def squeeze(text: str) -> str:
    """Text compared with whitespace collapsed, without case or typographic quotes and dashes:
    clause spans and paragraphs meet across line breaks, double spaces and drawn underlines
    ("-----"), but words glued together ("theParties") do not match their spaced form."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return " ".join(_RULE.sub(" ", text).split())


@dataclass(frozen=True)
class Clause:
    contract: str  # contract_key
    category: str
    text: str


def categories(data: Path) -> list[str]:
    with (data / "cuad" / "master_clauses-dev.csv").open(encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    return [c for c in header if c not in _NOT_CATEGORIES and "Answer" not in c]


def clauses(data: Path, min_chars: int = 0) -> list[Clause]:
    """Every marked span of at least `min_chars` characters. CUAD joins the pieces of a clause
    that is interrupted in the contract with "<omitted>"; each piece is a span of its own."""
    found = []
    with (data / "cuad" / "master_clauses-dev.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    names = categories(data)
    for row in rows:
        key = contract_key(row["Filename"])
        for category in names:
            raw = row[category].strip()
            if not raw or raw == "[]":
                continue
            try:
                spans = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                spans = [raw]
            for span in spans:
                for piece in span.split("<omitted>"):
                    if len(piece.strip()) >= min_chars:
                        found.append(Clause(key, category, piece.strip()))
    return found


def marked_by_contract(data: Path) -> dict[str, dict[str, list[str]]]:
    """contract_key -> category -> the texts of its marked clauses (`clauses`)."""
    marked: dict[str, dict[str, list[str]]] = {}
    for clause in clauses(data):
        marked.setdefault(clause.contract, {}).setdefault(clause.category, []).append(clause.text)
    return marked


def files(data: Path, kind: str) -> dict[str, Path]:
    """contract_key -> file, for `kind` "txt" or "pdf"."""
    return {contract_key(p.name): p for p in sorted((data / "cuad" / kind).iterdir())}


def descriptions(data: Path) -> dict[str, str]:
    """Category -> the description CUAD's annotators answered, from CUAD_v1_README.txt. The
    README spells a few names differently from the CSV ("Notice to Terminate Renewal"), so names
    are matched by their letters, then as part of a longer name or by their first letters."""
    text = (data / "cuad" / "CUAD_v1_README.txt").read_text(encoding="utf-8", errors="replace")
    pairs = re.findall(r"Category:\s*([^\r\n]+?)\s*[\r\n]+\s*Description:\s*([^\r\n]+)", text)
    by_letters = {re.sub(r"[^a-z]", "", name.casefold()): desc.strip() for name, desc in pairs}
    found: dict[str, str] = {}
    for category in categories(data):
        letters = re.sub(r"[^a-z]", "", category.casefold())
        match = by_letters.get(letters) or next(
            (d for n, d in by_letters.items() if letters in n or n.startswith(letters[:6])), None
        )
        if match:
            found[category] = match
    return found


def overlaps(a: str, b: str) -> bool:
    """Whether a paragraph and a marked clause overlap (both squeezed): the first
    OVERLAP_CHARS characters of one occur in the other, and neither is shorter than
    MIN_OVERLAP_CHARS."""
    if min(len(a), len(b)) < MIN_OVERLAP_CHARS:
        return False
    return a[:OVERLAP_CHARS] in b or b[:OVERLAP_CHARS] in a


def tune_half(key: str) -> bool:
    """Whether a contract (its `contract_key`) is in the half the contract benchmarks fit and
    tune on (its key's sha256 is even); the other half is the one they report."""
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2 == 0


def held_paragraphs(paragraphs: list[str], spans: list[str]) -> list[list[int]]:
    """For each marked clause (`spans`, the texts of one category in one contract), the
    paragraphs it overlaps, by index; a clause under MIN_OVERLAP_CHARS squeezed is left out."""
    squeezed = [squeeze(p) for p in paragraphs]
    marked = [s for s in map(squeeze, spans) if len(s) >= MIN_OVERLAP_CHARS]
    return [[j for j, p in enumerate(squeezed) if overlaps(s, p)] for s in marked]
