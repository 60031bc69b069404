"""Answer verification on data nobody here wrote, next to a plain term-overlap verifier.

    .venv/bin/python -m benchmarks.verify [--index benchmarks/out/obliqa/index] [--limit N]
                                          [--contractnli-only | --obliqa-only]

ContractNLI dev (`../shared/data/contractnli/dev.json`): 61 NDAs, each with the same 17
hypotheses labelled Entailment, Contradiction or NotMentioned, with evidence spans. The NDAs are
built into a lexkb index (benchmarks/out/contractnli, local embedder); each hypothesis is a
claim cited to its whole NDA (`verify_citations` with `{document, claim}`), and the verdicts map
supported = Entailment, contradicted = Contradiction, not_addressed = NotMentioned.
Last, format_context on ObliQA's own hits at random token budgets: how often it runs over or
writes XML a standard parser refuses (both must be never). Reported:
per-class precision, recall and F1 and macro-F1 at document level; at evidence level, how often
the sentence lexkb reports for a supported or contradicted verdict overlaps a gold evidence span.
lexkb's document verdict reads the support model's findings over the NDA's nearest paragraphs
(lexkb.answers.passages.document_verdict): reported as shipped and with its two thresholds chosen by
5-fold cross-validation over documents, next to the verifier without its model (word overlap,
its threshold and conflict rank chosen the same way), each hypothesis's most common label in
train.csv (the bar a verifier must clear), and term overlap over the NDA's best paragraph, its
threshold chosen the same way (it cannot say "contradicted").

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
import json
import random
import re
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from evaluation_data.obliqa import held_out, load_questions
from lexkb import Index
from lexkb.answers import verify_citations
from lexkb.answers.claims import judge
from lexkb.answers.passages import document_verdict as model
from lexkb.answers.passages.quantities import find_quantities
from lexkb.answers.passages.statements import split_sentences
from lexkb.core.text.tokenize import tokenize

REPO = Path(__file__).resolve().parent.parent


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


LABELS = {"Entailment": "supported", "Contradiction": "contradicted",
          "NotMentioned": "not_addressed"}  # fmt: skip
CLASSES = tuple(LABELS.values())


def contractnli_index(data: Path, work: Path) -> Index:
    """The NDAs as text files, built once into an index under `work`."""
    root = work / "index"
    if not (root / "CURRENT").exists():
        docs = work / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        for doc in json.loads((data / "contractnli" / "dev.json").read_text("utf-8"))["documents"]:
            (docs / f"nda-{doc['id']}.txt").write_text(doc["text"], encoding="utf-8")
        subprocess.run(
            [str(REPO / ".venv/bin/lexkb"), "build", str(docs), "--out", str(root), "--quiet"],
            check=True,
        )
    return Index.open(root)


def macro_f1(pairs: list[tuple[str, str]]) -> tuple[float, dict[str, tuple[float, float, float]]]:
    """pairs: (gold, predicted). Macro-F1 and per-class (precision, recall, F1)."""
    per = {}
    for label in CLASSES:
        tp = sum(g == p == label for g, p in pairs)
        predicted = sum(p == label for _, p in pairs)
        gold = sum(g == label for g, _ in pairs)
        precision = tp / predicted if predicted else 0.0
        recall = tp / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per[label] = (precision, recall, f1)
    return sum(f for _, _, f in per.values()) / len(per), per


def best_setting(rows: list[dict], predict, thresholds):
    return max(thresholds, key=lambda t: macro_f1([(r["gold"], predict(r, t)) for r in rows])[0])


def cross_validated(rows: list[dict], predict, thresholds, chosen=None) -> list[tuple[str, str]]:
    """5 folds over documents: each fold predicted at the threshold best on the other four
    (each fold's choice appended to `chosen`, when given)."""
    documents = sorted({r["doc"] for r in rows})
    folds = [set(documents[i::5]) for i in range(5)]
    pairs = []
    for fold in folds:
        best = best_setting([r for r in rows if r["doc"] not in fold], predict, thresholds)
        if chosen is not None:
            chosen.append(best)
        pairs += [(r["gold"], predict(r, best)) for r in rows if r["doc"] in fold]
    return pairs


def threshold_rule(judged: list, support_threshold: float, conflict_rank: int) -> str:
    """The document verdict lexkb used before its model: a conflict in one of the nearest
    `conflict_rank` paragraphs, else the best paragraph's support against a threshold."""
    if not judged:
        return "not_addressed"
    if any(r["verdict"] == "contradicted" for _, r in judged[:conflict_rank]):
        return "contradicted"
    best = max((r for _, r in judged), key=lambda r: r["support"])
    supported = best["support"] >= support_threshold and not best.get("missing")
    return "supported" if supported else "not_addressed"


def _overlaps(sentence: str | None, text: str, spans: list[tuple[int, int]]) -> bool:
    if not sentence:
        return False
    start = text.find(sentence)
    if start < 0:
        return False
    end = start + len(sentence)
    return any(a < end and start < b for a, b in spans)


def run_contractnli(data: Path, work: Path) -> None:
    from evaluation_data.contractnli import train_pairs
    from lexkb.answers import claims as verifier

    index = contractnli_index(data, work)
    dataset = json.loads((data / "contractnli" / "dev.json").read_text("utf-8"))
    hypotheses = {k: v["hypothesis"] for k, v in dataset["labels"].items()}
    majority: dict[str, defaultdict] = {}
    for pair in train_pairs(data):
        majority.setdefault(pair.hypothesis, defaultdict(int))[pair.label] += 1
    rows = []
    started = time.perf_counter()
    for doc in dataset["documents"]:
        name = f"nda-{doc['id']}"
        paragraphs = index.document_paragraphs(name)[1]["content"].to_list()
        for key, annotation in doc["annotation_sets"][0]["annotations"].items():
            claim = hypotheses[key]
            # What verify_citations does for {document, claim}, kept apart so that other
            # settings can be scored on the same judgements.
            judged = verifier.judge_in_document(index, name, claim)
            shipped = (
                model.document_verdict(claim, judged)[1]
                if judged
                else {"verdict": "not_addressed", "sentence": None}
            )
            counts = majority[claim]
            rows.append({
                "doc": doc["id"], "gold": LABELS[annotation["choice"]], "text": doc["text"],
                "claim": claim, "spans": [tuple(doc["spans"][i]) for i in annotation["spans"]],
                "shipped": shipped, "judged": judged,
                "majority": CLASSES[max(counts, key=counts.get)],
                "overlap": max((overlap(claim, p) for p in paragraphs), default=0.0),
            })  # fmt: skip
    seconds = time.perf_counter() - started
    for row in rows:  # the verifier without its model, on the same paragraphs
        row["by_overlap"] = [
            (hit, judge(row["claim"], hit, model=False)) for hit, _ in row["judged"]
        ]

    def model_at(row: dict, setting: tuple[float, float]) -> str:
        if not row["judged"]:
            return "not_addressed"
        return str(model.document_verdict(row["claim"], row["judged"], *setting)[1]["verdict"])

    def rule_at(row: dict, setting: tuple[float, int]) -> str:
        if not row["by_overlap"]:
            return "not_addressed"
        return threshold_rule(row["by_overlap"], *setting)

    def baseline_at(row: dict, t: float) -> str:
        return "supported" if row["overlap"] >= t else "not_addressed"

    thresholds = [x / 100 for x in range(20, 96, 2)]
    grid = [(e, c) for e in (x / 20 for x in range(4, 20)) for c in (x / 20 for x in range(4, 20))]
    chosen: list = []
    model_cv = cross_validated(rows, model_at, grid, chosen)
    on_all = best_setting(rows, model_at, grid)
    results = [
        ("lexkb, as shipped (support model, thresholds "
         f"{model.DOCUMENT_ENTAIL_AT} / {model.DOCUMENT_CONTRADICT_AT})",
         [(r["gold"], r["shipped"]["verdict"]) for r in rows]),
        ("support model, thresholds by 5-fold CV", model_cv),
        (f"support model at {on_all}, the best on all 61 NDAs (in-sample)",
         [(r["gold"], model_at(r, on_all)) for r in rows]),
        ("without the model: word overlap, threshold and conflict rank by 5-fold CV",
         cross_validated(rows, rule_at, [(t, k) for t in thresholds for k in (0, 1, 2, 3, 5)])),
        ("per-hypothesis majority (train.csv)", [(r["gold"], r["majority"]) for r in rows]),
        ("term overlap, threshold by 5-fold CV", cross_validated(rows, baseline_at, thresholds)),
    ]  # fmt: skip
    for row in rows:
        sentence = row["shipped"].get("sentence")
        row["verdict"] = row["shipped"]["verdict"]
        row["evidence"] = _overlaps(sentence.text if sentence else None, row["text"], row["spans"])
    print(f"\nContractNLI dev: {len(rows)} pairs, {len({r['doc'] for r in rows})} NDAs")
    print(f"{'verifier':40} {'macro-F1':>8}  " + "  ".join(f"{c:>22}" for c in CLASSES))
    for name, pairs in results:
        score, per = macro_f1(pairs)
        cells = "  ".join(f"P {p:.2f} R {r:.2f} F1 {f:.2f}" for p, r, f in per.values())
        print(f"{name:40} {score:8.3f}  {cells}")
    decided = [r for r in rows if r["verdict"] in ("supported", "contradicted")]
    gold_ec = [r for r in rows if r["gold"] in ("supported", "contradicted")]
    print(
        f"evidence: {sum(r['evidence'] for r in decided) / max(len(decided), 1):.3f} of lexkb's "
        f"supported/contradicted verdicts cite a gold evidence sentence (n={len(decided)}); "
        f"{sum(r['evidence'] for r in gold_ec) / max(len(gold_ec), 1):.3f} of gold entailed/"
        f"contradicted pairs get one (n={len(gold_ec)})"
    )
    print(f"thresholds (entail, contradict) each fold chose: {chosen}; on all NDAs: {on_all}")
    print(
        f"lexkb: {1000 * seconds / len(rows):.0f} ms a claim (search + judge "
        f"{verifier.EVIDENCE_PARAGRAPHS} paragraphs)"
    )


def run_context_budgets(index: Index, questions: list[dict], n: int = 500) -> None:
    """format_context on ObliQA's own hits at random budgets: never over, always parseable."""
    import xml.etree.ElementTree as ET

    from lexkb.answers import format_context
    from lexkb.answers.tokens import count_tokens

    rng = random.Random(3)
    over = broken = 0
    fill = []
    for q in questions[:n]:
        hits = index.search(q["Question"], k=20, min_relevance=0.0).hits
        budget = rng.randint(300, 8000)
        try:
            context = format_context(index, hits, q["Question"], max_tokens=budget)
        except ValueError:
            continue  # no single paragraph fits: an error, never an overrun
        over += count_tokens(context.xml) > budget
        try:
            ET.fromstring(context.xml)
        except ET.ParseError:
            broken += 1
        fill.append(context.tokens / budget)
    print(
        f"\nformat_context on ObliQA: {len(fill)} contexts at random budgets (300-8000 tokens): "
        f"{over} over budget, {broken} not parseable, mean fill {sum(fill) / len(fill):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks/out/contractnli")
    parser.add_argument("--limit", type=int, help="at most this many passages (a quick look)")
    parser.add_argument("--contractnli-only", action="store_true")
    parser.add_argument("--obliqa-only", action="store_true")
    args = parser.parse_args()
    if not args.obliqa_only:
        run_contractnli(args.data, args.work)
    if not args.contractnli_only:
        run_obliqa(args)
        run_context_budgets(Index.open(args.index), load_questions(args.data / "obliqa"))


def run_obliqa(args: argparse.Namespace) -> None:
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
    print(f"\nObliQA dev: {len(claims)} claims ({len(held)} held-out); baseline t={t:.2f} (tune)")
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
