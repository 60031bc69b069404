"""ObliQA inputs shared by the benchmarks and training: the dev questions and their gold
passages, the held-out half, the structured passages and the document names.

`DocumentMap.rtf` lists, for each DocumentID, the file name and the names the rulebooks use for
one another ("GEN", "General Rulebook (GEN)"). Written out as a lexkb catalog beside the passages,
they let citations such as "GEN 3.3.31" or "section 58 of FSMR" resolve across documents.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path


def load_questions(data: Path) -> list[dict]:
    """ObliQA's dev questions (`questions-dev.json`), each with its gold passages."""
    return json.loads((data / "questions-dev.json").read_text(encoding="utf-8"))


def held_out(question: dict) -> bool:
    """The half of the dev questions no tuning looked at."""
    return int(hashlib.sha256(question["QuestionID"].encode()).hexdigest(), 16) % 2 == 1


def gold_of(question: dict) -> set[tuple[str, str]]:
    """The question's gold passages as (DocumentID, PassageID)."""
    return {(str(p["DocumentID"]), str(p["PassageID"])) for p in question["Passages"]}


def passage_key(hit) -> tuple[str, str]:
    """A lexkb hit as the gold passage it would be: its document key and its ref without the
    "[n]" lexkb adds to tell repeated refs apart."""
    return hit.document_key, re.sub(r" \[\d+\]$", "", hit.ref or "")


def document_map(data: Path) -> dict[int, list[str]]:
    """DocumentID -> its names, the versioned file name first."""
    rtf = (data / "DocumentMap.rtf").read_text(encoding="utf-8", errors="replace")
    rtf = rtf.replace("\\\n", "\n").replace("\\'96", "–").replace("\\'93", '"')
    rtf = rtf.replace("\\'94", '"')
    names: dict[int, list[str]] = {}
    for match in re.finditer(r"(\d+): \[(.*?)\]", rtf, re.DOTALL):
        names[int(match.group(1))] = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2))
    return names


def extract_passages(data: Path, target: Path) -> Path:
    """The 40 structured documents as `<DocumentID>.json`, with a catalog naming them."""
    if not target.is_dir():
        target.mkdir(parents=True)
        with zipfile.ZipFile(data / "StructuredRegulatoryDocuments.zip") as archive:
            for name in archive.namelist():
                if name.endswith(".json") and not name.startswith("__MACOSX"):
                    (target / Path(name).name).write_bytes(archive.read(name))
    documents = {}
    for doc_id, names in document_map(data).items():
        codes = [n for n in names[1:] if re.fullmatch(r"[A-Z]{2,6}", n)]
        documents[str(doc_id)] = {
            "title": max(names[1:] or names, key=len),
            "short_name": codes[0] if codes else None,
            "aliases": names[1:],
        }
    catalog = {"documents": documents}
    (target / "catalog.json").write_text(json.dumps(catalog, indent=1), encoding="utf-8")
    return target
