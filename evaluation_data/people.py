"""The documents the people's question sets (`benchmarks/questions/people/`) are written over,
written out as source files under the names the sets use (issue 58).

The sets name each document by the stem of the file lexkb reads: `gdpr-en`, an EU act's CELEX
or OJ name, an ADGM rulebook's text file (`COBS_VER15.150823`), a CUAD contract's text file,
`nda_<id>` for a ContractNLI train NDA, `ukpga_20000032_en` for the CLML Act. Never the six
realdocs documents or realqa: those measure.

    .venv/bin/python -m evaluation_data.people OUT [NAME ... | --named]
    (every document when no NAME; --named: those the sets give answers in)
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from evaluation_data.realdocs import SIX

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
# EU acts and the CLML Act, by stem: the file lexkb reads.
_FILES = {
    "gdpr-en": "gdpr/gdpr-en.xml",
    "CELEX_32022L2464_EN_TXT": "realdocs/eu/CELEX_32022L2464_EN_TXT.pdf",
    "CELEX_32022R1925_EN_TXT": "realdocs/eu/CELEX_32022R1925_EN_TXT.pdf",
    "OJ_L_202401689_EN_TXT": "realdocs/eu/OJ_L_202401689_EN_TXT.pdf",
    "ukpga_20000032_en": "realdocs/xml/ukpga_20000032_en.xml",
}
_ADGM = "obliqa/regulatory-documents-txt.tar.gz"
SETS = "benchmarks/questions/people"
_NDAS = "contractnli/train-documents.json"


def adgm(data: Path = DATA) -> list[str]:
    """The ADGM rulebooks and guidance (ObliQA's documents, as its text files name them)."""
    with tarfile.open(data / _ADGM) as tar:
        return [Path(m.name).stem for m in tar.getmembers() if m.name.endswith(".txt")]


def names(data: Path = DATA) -> list[str]:
    """Every document a set may name."""
    found = [*_FILES, *adgm(data)]
    found += sorted(p.stem for p in (data / "cuad" / "txt").glob("*.txt"))
    found += [f"nda_{d['id']}" for d in _nda_documents(data)]
    assert not {Path(n).stem for n in SIX} & set(found)
    return found


def write(out: Path, wanted: Iterable[str] | None = None, data: Path = DATA) -> list[Path]:
    """The wanted documents (every one when None) as files under `out`; a name no source holds
    is a KeyError, so a set's typo never passes unnoticed."""
    every = names(data)
    chosen = set(every if wanted is None else wanted)
    unknown = chosen - set(every)
    if unknown:
        raise KeyError(f"no source holds {sorted(unknown)}")
    out.mkdir(parents=True, exist_ok=True)
    return [path for path in _written(out, chosen, data)]


def _written(out: Path, chosen: set[str], data: Path) -> Iterator[Path]:
    for name, relative in _FILES.items():
        if name in chosen:
            source = data / relative
            target = out / source.name
            shutil.copyfile(source, target)
            yield target
    with tarfile.open(data / _ADGM) as tar:
        for member in tar.getmembers():
            stem = Path(member.name).stem
            if member.name.endswith(".txt") and stem in chosen:
                target = out / f"{stem}.txt"
                target.write_bytes(tar.extractfile(member).read())
                yield target
    for path in sorted((data / "cuad" / "txt").glob("*.txt")):
        if path.stem in chosen:
            shutil.copyfile(path, out / path.name)
            yield out / path.name
    for document in _nda_documents(data):
        name = f"nda_{document['id']}"
        if name in chosen:
            target = out / f"{name}.txt"
            target.write_text(document["text"], encoding="utf-8")
            yield target


def _nda_documents(data: Path) -> list[dict]:
    return json.loads((data / _NDAS).read_text(encoding="utf-8"))["documents"]


def people_sets(folder: Path) -> list[dict]:
    """Every question of the sets in `folder`, each with the file it came from."""
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append({**json.loads(line), "set": path.stem})
    return rows


def named_by_sets(folder: Path) -> set[str]:
    """Every document the sets in `folder` give an answer in."""
    return {a["document"] for row in people_sets(folder) for a in row.get("answers", [])}


if __name__ == "__main__":
    target, wanted = Path(sys.argv[1]), sys.argv[2:]
    if wanted == ["--named"]:
        wanted = sorted(named_by_sets(Path(__file__).resolve().parent.parent / SETS))
    for written in write(target, wanted or None):
        print(written)


Split = str  # "train", "tune" or "test"


def split_of(row: dict) -> Split:
    """A question's split, by its answer's document (the first by name), so that no document
    has questions on both sides; a question with no answer, by its id. Six tenths train, two
    tune, two test, by SHA-256."""
    documents = sorted({a["document"] for a in row.get("answers", [])})
    key = documents[0] if documents else row["id"]
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "tune" if bucket < 8 else "test"


def ref_key(ref: str | None) -> str:
    """A ref compared without case, spaces or a trailing dot (as benchmarks/realqa.py does)."""
    return re.sub(r"\s+", "", (ref or "").casefold()).rstrip(".")


def holds(ref: str, gold: str) -> bool:
    """`ref` is `gold` or a unit inside or around it: "Article 33" holds "Article 33(1)"."""
    a, b = ref_key(ref), ref_key(gold)
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith(short) and long[len(short)] in "(.["
