"""Checks a people's question set against the documents as lexkb reads them: every answer's
unit must exist in its document, and each row must be of the set's form (issue 58).

    .venv/bin/python -m benchmarks.people_check SET.jsonl [...] [--index ROOT]

Without `--index`, the documents the sets name are written out and built into a keyword-only
index under `benchmarks/out/people-check/<first set's name>/` (seconds to minutes). A row is of the form:
`id` (unique), `kind` (KINDS), `question`, `answers` ([{document, ref}], empty only for
unanswerable questions), `previous` (the earlier turn, for a follow-up or switch), `note`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Literal, get_args

from evaluation_data.people import holds, write

REPO = Path(__file__).resolve().parent.parent
Kind = Literal["answerable", "list", "unanswerable", "followup", "switch"]
KINDS = frozenset(get_args(Kind))


def problems(rows: list[dict], refs: dict[str, list[str]]) -> list[str]:
    """What is wrong with each row: form first, then answers whose unit no paragraph holds."""
    found, seen = [], set()
    for row in rows:
        name = row.get("id", "?")
        if name in seen:
            found.append(f"{name}: id used twice")
        seen.add(name)
        kind, answers = row.get("kind"), row.get("answers", [])
        if kind not in KINDS:
            found.append(f"{name}: kind {kind!r} not one of {sorted(KINDS)}")
        if not str(row.get("question", "")).strip():
            found.append(f"{name}: no question")
        if kind in ("followup", "switch") and not row.get("previous"):
            found.append(f"{name}: a {kind} needs the previous question")
        if (kind == "unanswerable") != (not answers):
            found.append(f"{name}: {kind} with {len(answers)} answers")
        for answer in answers:
            document, ref = answer.get("document"), answer.get("ref")
            if document not in refs:
                found.append(f"{name}: document {document!r} not in the index")
            elif not any(holds(r, ref) for r in refs[document]):
                found.append(f"{name}: {document} has no unit {ref!r}")
    return found


def document_refs(root: Path, documents: set[str]) -> dict[str, list[str]]:
    """Each document's paragraph refs, as the index reads them."""
    from lexkb import Index

    index = Index.open(root)
    refs = {}
    for document in sorted(documents):
        try:
            _, chunks = index.document_paragraphs(document)
        except (KeyError, LookupError, ValueError):
            continue
        refs[document] = [r for r in chunks["ref"].to_list() if r]
    return refs


def built(documents: set[str], work: Path) -> Path:
    sources, root = work / "sources", work / "index"
    write(sources, documents)
    lexkb = REPO / ".venv" / "bin" / "lexkb"
    command = [str(lexkb), "build", str(sources), "--out", str(root), "--embedder", "none"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", type=Path, nargs="+")
    parser.add_argument("--index", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.sets
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]  # fmt: skip
    documents = {a["document"] for row in rows for a in row.get("answers", []) if "document" in a}
    work = REPO / "benchmarks" / "out" / "people-check" / args.sets[0].stem
    root = args.index or built(documents, work)
    found = problems(rows, document_refs(root, documents))
    for problem in found:
        print(problem)
    print(f"{len(rows)} questions, {len(found)} problems", file=sys.stderr)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
