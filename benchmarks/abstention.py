"""Abstention: does lexkb answer what its index holds and decline what it does not?

    .venv/bin/python -m benchmarks.abstention --index benchmarks/out/obliqa/index [--fit] [--limit N]
                                              [--rerank]

Needs the ObliQA index with the local embedder (benchmarks/obliqa.py builds one).

- Answerable: ObliQA dev questions asked of the ObliQA (ADGM) index. The tune half
  (sha256(QuestionID) even) fits; the held-out half is reported.
- Unanswerable, for fitting: lawyer-marked CUAD clauses (40-300 characters), CUAD's category
  descriptions, and questions written here on subjects the corpus lacks
  (benchmarks/questions/out_of_scope_tune.txt: neither data protection nor contracts), asked
  of the same index.
- Unanswerable, written here on neighbouring subjects and reported, not fitted on
  (benchmarks/questions/neighbouring.txt: privacy laws other than the GDPR, contracts
  other than NDAs).
- Unanswerable, written here on neighbouring subjects to choose one setting on
  (benchmarks/questions/neighbouring_tune.txt: retirement savings, consumer credit, insurance,
  personal tax, privacy outside the EU, employment, health, property; neither model was fitted
  on them). EvidenceSettings.scope_overrule, the relevance model's chance at which an
  out-of-scope reading is overruled, is the lowest at which none of them, nor any other
  unanswerable tune question, is overruled; XRefRAG's ADGM dev questions say what it rescues.
- Unanswerable, reported only: the 17 ContractNLI hypotheses and the questions written here from
  GDPR articles (benchmarks/questions/gdpr.txt). None of their content is in the ADGM corpus.
- Answerable, to choose the relevance model's floor (EvidenceSettings.min_answers, reason
  `not_answered_by_sources`): XRefRAG's ADGM dev questions, which the model never saw (it was
  trained on ObliQA's tune half and XRefRAG train). For each set, the share the floor would
  decline at several values is printed.

`--fit` fits lexkb.answers.question.scope's two models (dense and lexical) on the tune sets and prints
their coefficients and the scope table on the tune sets; the shipped models are then reported.
Side by side in the same run: the relevance floor alone (a hybrid search's best hit under
lexkb.relevance.RELEVANCE_FLOOR), and the best hit's cosine with a threshold set to abstain on
10% of the tune questions. Reported: ABSTAIN rate per set, per reason, the DIRECT rate, and
Recall@5 of the sources on the answered held-out questions. `--rerank` searches as `ask` does
with its rerank on: the relevance model reorders the first 30 and each hit carries its chance.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.relevance import fit_logistic
from evaluation_data.cuad import clauses, descriptions
from evaluation_data.obliqa import gold_of, held_out, load_questions, passage_key
from evaluation_data.questions import written_questions
from lexkb import Index, relevance
from lexkb.answers.evidence import ABSTAIN, DIRECT, EvidenceSettings, evidence
from lexkb.answers.question import scope

REPO = Path(__file__).resolve().parent.parent


def gdpr_questions() -> list[str]:
    return written_questions("gdpr.txt")


def contractnli_hypotheses(data: Path) -> list[str]:
    labels = json.loads((data / "contractnli" / "dev.json").read_text(encoding="utf-8"))["labels"]
    return [v["hypothesis"] for v in labels.values()]


def cuad_negatives(data: Path, n: int = 300) -> list[str]:
    spans = [c.text for c in clauses(data, min_chars=40) if len(c.text) <= 300]
    return random.Random(5).sample(spans, n) + list(descriptions(data).values())


def question_negatives() -> list[str]:
    """Questions written here on subjects the ADGM corpus lacks (not data protection, not
    contracts): unanswerable questions in a question's own register, to fit on."""
    return written_questions("out_of_scope_tune.txt")


def neighbouring_negatives() -> list[str]:
    """Questions written here on neighbouring subjects (privacy laws other than the GDPR,
    contracts other than NDAs). Reported, not fitted on: a refit with them was worse on the
    held-out answerable questions (BENCHMARKS.md "Abstention", stop 27)."""
    return written_questions("neighbouring.txt")


def neighbouring_tune() -> list[str]:
    """Unanswerable questions on neighbouring subjects, written to choose scope_overrule on."""
    return written_questions("neighbouring_tune.txt")


def xrefrag_adgm_dev(data: Path) -> list[str]:
    lines = (data / "xrefrag" / "ADGM-dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


def features(index: Index, queries: list[str], mode: str) -> np.ndarray:
    rows = []
    for query in queries:
        hits = index.search(query, k=10, mode=mode, min_relevance=0.0).hits
        rows.append(scope.signals(index, query, hits).values)
    return np.array(rows)


def fit(index: Index, positives: list[str], negatives: list[str]) -> None:
    for name, mode, columns in (
        ("DENSE", "hybrid", scope.FEATURES),
        ("LEXICAL", "keyword", tuple(f for f in scope.FEATURES if f != "cosine")),
    ):
        x_pos, x_neg = features(index, positives, mode), features(index, negatives, mode)
        x = np.vstack([x_pos, x_neg])
        y = np.concatenate([np.ones(len(x_pos)), np.zeros(len(x_neg))])
        keep = [scope.FEATURES.index(c) for c in columns]
        weights, bias = fit_logistic(x[:, keep], y, l2=1.0)
        model = relevance.Calibration(columns, tuple(round(float(w), 4) for w in weights), bias)
        print(f"{name} = Calibration({columns}, {model.weights}, {bias:.4f})")
        p = model.apply(x, scope.FEATURES)
        print("  tune: min_scope  answerable-abstain  unanswerable-abstain")
        for floor in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            print(
                f"  {floor:.1f}  {np.mean(p[y == 1] < floor):.3f}  {np.mean(p[y == 0] < floor):.3f}"
            )


def judge(index: Index, queries: list[str], rerank: bool = False) -> list[tuple]:
    """(evidence, top relevance, top cosine, hits) per query; with `rerank`, the search's first
    30 reordered by the relevance model, as `ask` searches with AskSettings.rerank."""
    found = []
    for query in queries:
        hits = index.search(query, k=10, min_relevance=0.0, rerank=rerank).hits
        cosine = 0.0
        if hits:
            cosine = float(index.cosines(query, index.rows([hits[0].chunk_id]))[0])
        found.append(
            (evidence(index, query, hits), hits[0].relevance if hits else 0.0, cosine, hits)
        )
    return found


OVERRULE = (0.5, 0.9, 0.95, 0.98, 0.99, 0.995, 1.01)
# The two reasons the table decides again; any other ABSTAIN stands.
_READ_HERE = {"out_of_scope", "not_answered_by_sources"}


def overruled(judged: list[tuple], floors: tuple[float, ...]) -> dict[tuple[float, float], float]:
    """The share of `judged` ABSTAIN would decline if an out-of-scope reading stood only where
    the relevance model's best chance is under X, and not_answered_by_sources were read at
    floor f. X = 1.01: the scope model never overruled."""
    shares = {}
    settings = EvidenceSettings()
    for x in OVERRULE:
        for f in floors:
            declined = 0
            for e, *_ in judged:
                other = e.mode == ABSTAIN and e.reason not in _READ_HERE
                if e.top_answers is None:  # a statement: the scope model alone, as it is
                    declined += bool(other or e.scope < settings.min_scope)
                    continue
                chance = e.top_answers
                declined += bool(
                    other or (e.scope < settings.min_scope and chance < x) or chance < f
                )
            shares[(x, f)] = declined / len(judged)
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default=str(REPO / "benchmarks/out/obliqa/index"))
    parser.add_argument("--data", default=str(REPO.parent / "shared/data"))
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--limit", type=int, default=None, help="held-out questions asked")
    parser.add_argument("--rerank", action="store_true", help="search as ask does with rerank")
    args = parser.parse_args()
    data = Path(args.data)
    index = Index.open(args.index)
    questions = load_questions(data / "obliqa")
    tune = [q for q in questions if not held_out(q)]
    report = [q for q in questions if held_out(q)]
    if args.limit:
        report = random.Random(3).sample(report, args.limit)
    tune_sample = random.Random(2).sample(tune, 600)
    negatives = cuad_negatives(data) + question_negatives()
    if args.fit:
        fit(index, [q["Question"] for q in tune_sample], negatives)
        return
    tune_cos = [
        c for _, _, c, _ in judge(index, [q["Question"] for q in tune_sample[:300]], args.rerank)
    ]
    cos_floor = float(np.percentile(tune_cos, 10))
    xrefrag = xrefrag_adgm_dev(data)
    sets = {
        "ObliQA held-out (answerable)": [q["Question"] for q in report],
        "ContractNLI hypotheses": contractnli_hypotheses(data),
        "GDPR questions": gdpr_questions(),
        "CUAD clauses (tune negatives)": cuad_negatives(data),
        "out-of-scope questions written here (tune negatives)": question_negatives(),
        "neighbouring-subject questions written here (not fitted on)": neighbouring_negatives(),
        "neighbouring-subject tune questions (choose scope_overrule)": neighbouring_tune(),
        "XRefRAG ADGM dev (answerable; chooses min_answers, scope_overrule)": xrefrag,
    }
    floors = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
    declined: dict[str, list[float]] = {}
    grid: dict[str, dict[tuple[float, float], float]] = {}
    asked: dict[str, int] = {}
    print(f"cosine baseline threshold (10% of tune abstain): {cos_floor:.3f}\n")
    print("| set | n | lexkb ABSTAIN | DIRECT | relevance floor | cosine threshold |")
    print("|---|---|---|---|---|---|")
    reasons: dict[str, Counter] = {}
    for name, queries in sets.items():
        judged = judge(index, queries, args.rerank)
        modes = [e.mode for e, _, _, _ in judged]
        reasons[name] = Counter(e.reason for e, _, _, _ in judged if e.mode == ABSTAIN)
        # Only a question is read by the relevance model (a statement's top_answers is None)
        chances = np.array([e.top_answers for e, _, _, _ in judged if e.top_answers is not None])
        declined[name] = [float(np.mean(chances < f)) if chances.size else 0.0 for f in floors]
        asked[name] = int(chances.size)
        grid[name] = overruled(judged, floors)
        floor = np.mean([r < relevance.RELEVANCE_FLOOR for _, r, _, _ in judged])
        cosine = np.mean([c < cos_floor for _, _, c, _ in judged])
        print(
            f"| {name} | {len(queries)} | {modes.count(ABSTAIN) / len(modes):.3f} | "
            f"{modes.count(DIRECT) / len(modes):.3f} | {floor:.3f} | {cosine:.3f} |"
        )
        if name.startswith("ObliQA"):
            answered = [
                (q, e.hits) for q, (e, _, _, _) in zip(report, judged, strict=True) if e.answerable
            ]
            direct = [
                (q, e.hits)
                for q, (e, _, _, _) in zip(report, judged, strict=True)
                if e.mode == DIRECT
            ]
            everyone = [(q, hits) for q, (_, _, _, hits) in zip(report, judged, strict=True)]
            for label, rows in (("answered", answered), ("DIRECT", direct), ("all", everyone)):
                recall = [
                    sum(passage_key(h) in gold_of(q) for h in hits[:5]) / len(gold_of(q))
                    for q, hits in rows
                ]
                recall_line = (
                    f"  Recall@5 on {label} questions: {np.mean(recall):.3f} ({len(rows)})"
                )
                reasons.setdefault("_recall", Counter())[recall_line] += 1
    print("\nQuestions only (statements are not read by the relevance model):")
    print("| set | questions | " + " | ".join(f"best chance < {f}" for f in floors) + " |")
    print("|---|---|" + "---|" * len(floors))
    for name, shares in declined.items():
        print(f"| {name} | {asked[name]} | " + " | ".join(f"{x:.3f}" for x in shares) + " |")
    print(
        "\nABSTAIN with the scope model overruled where the best chance reaches X (rows) and "
        "the floor f (columns); other reasons as decided (an estimate: an overruled question "
        "is not checked again for them)"
    )
    for name, shares in grid.items():
        print(f"\n{name}\n| X | " + " | ".join(f"f {f}" for f in floors) + " |")
        print("|---|" + "---|" * len(floors))
        for x in OVERRULE:
            print(f"| {x} | " + " | ".join(f"{shares[(x, f)]:.3f}" for f in floors) + " |")
    print()
    for line in reasons.pop("_recall", {}):
        print(line)
    for name, counts in reasons.items():
        print(f"  {name}: abstention reasons {dict(counts)}")


if __name__ == "__main__":
    main()
