"""Answer verification on data nobody here wrote, next to a plain term-overlap verifier.

    .venv/bin/python benchmarks/verify.py [--index benchmarks/out/obliqa/index] [--limit N]

ObliQA dev corruptions. For the gold passages of the dev questions, a claim is one sentence of
the passage (eight words or more), cited to the passage's paragraph. Each good claim has
corrupted twins, built from the same sentence when it allows:

- `number changed`: a period, amount, percentage, date or number of 10 or more gets another value;
- `obligation negated`: "shall"/"must"/"may" gets a "not", or loses the one it had;
- `citation moved`: the good claim, cited to another paragraph of the same document.

and a good twin, `good, reworded`: the sentence with common rewordings ("shall" -> "must",
"prior to" -> "before", ...; two at least), as an answer would say it.

Reported: the share of each corruption caught (verdict other than `supported`) and the share of
good claims wrongly failed, for `lexkb.answers.verify_citations` and for the baseline, which
calls a claim supported when at least a share `t` of its words (lexkb's tokenizer: stemmed, no
stopwords) occur in the cited paragraph. `t` is chosen on the tune half of the passages (those
of questions whose sha256(QuestionID) is even); figures are on the held-out half, whose
passages no choice looked at. The claims are verbatim sentences: a real answer paraphrases, so
"wrongly failed" here is a floor, not an estimate.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from obliqa import held_out, load_questions  # noqa: E402

from lexkb import Index  # noqa: E402
from lexkb.answers import verify_citations  # noqa: E402
from lexkb.answers.quantities import find_quantities  # noqa: E402
from lexkb.answers.statements import split_sentences  # noqa: E402
from lexkb.tokenize import tokenize  # noqa: E402

KINDS = ("good", "good, reworded", "number changed", "obligation negated", "citation moved")
# Meaning-preserving rewordings common between regulatory text and an answer about it.
_REWORDINGS = [
    (r"\bshall not\b", "must not"), (r"\bshall\b", "must"), (r"\bprior to\b", "before"),
    (r"\bin accordance with\b", "under"), (r"\bpursuant to\b", "under"),
    (r"\bin respect of\b", "for"), (r"\bensure that\b", "make sure that"),
    (r"\bcommence\b", "begin"), (r"\bobtain\b", "get"), (r"\bsufficient\b", "enough"),
    (r"\badditional\b", "extra"), (r"\bappropriate\b", "suitable"),
    (r"\bin relation to\b", "about"), (r"\bwhere\b", "if"), (r"\bsuch\b", "these"),
    (r"\bundertake\b", "carry out"), (r"\bprovide\b", "give"), (r"\brequire\b", "need"),
]  # fmt: skip
_MODAL = re.compile(r"\b(shall|must|may)( not)?\b", re.I)


def paragraphs_by_passage(index: Index) -> tuple[dict, dict]:
    """(document key, passage id) -> [(chunk id, text)], and document key -> all its paragraphs."""
    by_passage: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    by_document: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for document in index.documents():
        _, paragraphs = index.document_paragraphs(document["document_key"])
        for chunk_id, ref, text in paragraphs.select("chunk_id", "ref", "content").rows():
            key = (document["document_key"], re.sub(r" \[\d+\]$", "", ref or ""))
            by_passage[key].append((chunk_id, text))
            by_document[document["document_key"]].append((chunk_id, text))
    return by_passage, by_document


def changed_number(sentence: str) -> str | None:
    for q in find_quantities(sentence):
        digits = re.search(r"\d[\d,]*", q.text)
        if not digits or (q.kind == "number" and float(q.key.split(":")[1]) < 10):
            continue
        value = int(digits.group().replace(",", "").split(".")[0] or 0)
        new = value + 1 if q.kind == "date" else (value * 2 if value > 1 else value + 1)
        text = q.text[: digits.start()] + str(new) + q.text[digits.end() :]
        # "thirty (30) days" says its number twice; the corruption changes the digits only, so
        # drop the words to keep the claim self-consistent.
        text = re.sub(r"^[a-z\s-]+\(\s*(\d+)\s*\)", r"\1", text, flags=re.I)
        return sentence[: q.start] + text + sentence[q.end :]
    return None


def reworded(sentence: str) -> str | None:
    """The sentence with at least two of the rewordings applied, its list marker dropped."""
    text, changes = re.sub(r"^\(?[a-z0-9]{1,4}[.)]\s+", "", sentence), 0
    for pattern, replacement in _REWORDINGS:
        text, n = re.subn(pattern, replacement, text, flags=re.I)
        changes += n
    return text if changes >= 2 else None


def negated(sentence: str) -> str | None:
    match = _MODAL.search(sentence)
    if not match:
        return None
    replacement = match.group(1) if match.group(2) else f"{match.group(1)} not"
    return sentence[: match.start()] + replacement + sentence[match.end() :]


def build_claims(questions, by_passage, by_document, limit: int | None) -> list[dict]:
    """One good claim per passage and its corruptions, each tagged with its half."""
    rng = random.Random(5)
    claims, seen = [], set()
    for q in questions:
        for p in q["Passages"]:
            key = (str(p["DocumentID"]), str(p["PassageID"]))
            if key in seen or key not in by_passage:
                continue
            seen.add(key)
            half = "held-out" if held_out(q) else "tune"
            for chunk_id, text in by_passage[key]:
                sentences = [text[a:b] for a, b in split_sentences(text)]
                sentences = [s for s in sentences if len(s.split()) >= 8]
                if not sentences:
                    continue
                good = sentences[0]
                claims.append({"kind": "good", "half": half, "id": chunk_id, "claim": good})
                for kind, make in (("good, reworded", reworded),
                                   ("number changed", changed_number),
                                   ("obligation negated", negated)):  # fmt: skip
                    source = next((s for s in sentences if make(s)), None)
                    if source:
                        claims.append(
                            {"kind": kind, "half": half, "id": chunk_id, "claim": make(source)}
                        )
                others = [c for c, t in by_document[key[0]] if c != chunk_id and good not in t]
                if others:
                    claims.append({"kind": "citation moved", "half": half,
                                   "id": rng.choice(others), "claim": good})  # fmt: skip
                break
            if limit and len(seen) >= limit:
                return claims
    return claims


def overlap(claim: str, paragraph: str) -> float:
    terms = set(tokenize(claim))
    return len(terms & set(tokenize(paragraph))) / len(terms) if terms else 0.0


def report(name: str, verdicts: list[tuple[str, bool]]) -> None:
    """`verdicts`: (kind, supported) for each claim. A good claim not supported is wrongly
    failed; a corrupted one not supported is caught."""
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for kind, supported in verdicts:
        by_kind[kind].append(supported)
    cells = []
    for kind in KINDS:
        values = by_kind.get(kind, [])
        good = kind.startswith("good")
        caught = len(values) - sum(values)
        label = f"{kind}: wrongly failed" if good else f"{kind}: caught"
        cells.append(f"{label} {caught / max(len(values), 1):.3f} (n={len(values)})")
    print(f"{name}\n  " + "\n  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--limit", type=int, help="at most this many passages (a quick look)")
    args = parser.parse_args()
    index = Index.open(args.index)
    by_passage, by_document = paragraphs_by_passage(index)
    claims = build_claims(load_questions(args.data / "obliqa"), by_passage, by_document, args.limit)
    texts = {cid: text for pairs in by_document.values() for cid, text in pairs}
    tune = [c for c in claims if c["half"] == "tune"]
    held = [c for c in claims if c["half"] == "held-out"]

    def baseline_errors(t: float) -> int:
        return sum(
            (overlap(c["claim"], texts[c["id"]]) >= t) != c["kind"].startswith("good") for c in tune
        )

    t = min((x / 20 for x in range(1, 21)), key=baseline_errors)
    print(f"ObliQA dev: {len(claims)} claims ({len(held)} held-out); baseline t={t:.2f} (tune)")
    started = time.perf_counter()
    verdicts = []
    for c in held:
        checked = verify_citations(index, [{"paragraph_id": c["id"], "claim": c["claim"]}])
        verdicts.append((c["kind"], checked.citations[0].verdict == "supported"))
    seconds = time.perf_counter() - started
    report("lexkb verify_citations", verdicts)
    report(f"term overlap >= {t:.2f}", [
        (c["kind"], overlap(c["claim"], texts[c["id"]]) >= t) for c in held
    ])  # fmt: skip
    print(f"lexkb: {1000 * seconds / max(len(held), 1):.1f} ms a citation")


if __name__ == "__main__":
    main()
