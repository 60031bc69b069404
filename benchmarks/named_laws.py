"""Questions about laws the index does not hold, asked of ADGM's rulebooks (issue 58).

    .venv/bin/python -m benchmarks.named_laws [--index benchmarks/out/obliqa/index] [--limit N]

Each question goes through what `ask` decides with, three times in the same run: as now (a
hybrid search's first twenty in the ranker's order, then lexkb.answers.evidence with the default
settings: names read, the subject and answerability models), with the answerability model alone
at its own thresholds (stop 71: the subject model's threshold at 0), and as main did before
issue 58 (the search's first ten, `decline_not_held` and `answerability` off). Sets:

- answerable: ObliQA dev's held-out half (the ADGM index answers them); abstaining is a miss.
- named foreign laws: people's questions written here (`benchmarks/questions/people/`) about the
  GDPR, the AI Act, the DMA, the CSRD and the Police (Northern Ireland) Act whose words name
  that law (by the names in NAMED below, chosen by hand, not by lexkb's reader), asked of the
  ADGM index, which holds none of them.
- neighbouring, no law named: the other people's questions about those acts and about the
  contracts and NDAs (no name of NAMED in them), asked of the same index.
- subjects no index here holds (benchmarks/questions/elsewhere/: work, family, tax, travel,
  health, ...), the topics of the test split (stop 73; the others are fitted on).

The subject model (lexkb.answers.ranking.subject) was fitted on the train and tune splits of
these same people's questions asked of this same index (training/foreign.py), so the two foreign
sets are reported on the test split (by document, evaluation_data.people.split_of) apart from
the splits fitted on.

Reported: the share abstained per set, and per reason.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from evaluation_data.obliqa import held_out, load_questions
from evaluation_data.people import adgm, people_sets, split_of
from evaluation_data.questions import elsewhere_rows
from lexkb import Index
from lexkb.answers.evidence import ABSTAIN, EvidenceSettings, evidence
from lexkb.answers.ranking import ranker

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
# How people name each act, written by hand: the selection must not use lexkb's own reader.
NAMED = {
    "gdpr-en": r"\bGDPR\b|General Data Protection Regulation|Regulation \(EU\) 2016/679",
    "OJ_L_202401689_EN_TXT": r"\bAI Act\b|Artificial Intelligence Act|Regulation \(EU\) 2024/1689",
    "CELEX_32022R1925_EN_TXT": r"\bDMA\b|Digital Markets Act|Regulation \(EU\) 2022/1925",
    "CELEX_32022L2464_EN_TXT": r"\bCSRD\b|Corporate Sustainability Reporting Directive"
    r"|Directive \(EU\) 2022/2464",
    "ukpga_20000032_en": r"Police \(Northern Ireland\) Act|Police Act|Police \(NI\) Act",
}
_ANY_NAME = re.compile("|".join(f"(?:{p})" for p in NAMED.values()))


def people_questions(test: bool) -> tuple[list[str], list[str]]:
    """(named foreign laws, neighbouring with no law named): the people's questions about
    documents the ADGM index does not hold, first turns only, of the test split or of the
    others."""
    named: list[str] = []
    neighbouring: list[str] = []
    rulebooks = set(adgm())
    for row in people_sets(REPO / "benchmarks" / "questions" / "people"):
        if row["kind"] in ("followup", "switch"):
            continue
        documents = {a["document"] for a in row.get("answers", [])}
        if row["kind"] == "unanswerable" or not documents:
            continue  # which law an unanswerable question is about is not recorded
        if documents & rulebooks or (split_of(row) == "test") != test:
            continue
        if documents & NAMED.keys() and _ANY_NAME.search(row["question"]):
            named.append(row["question"])
        elif not _ANY_NAME.search(row["question"]):
            neighbouring.append(row["question"])
    return named, neighbouring


# The answerability model alone, as stop 71 shipped it: its thresholds before the subject model.
ALONE = EvidenceSettings(held_below=0.0, foreign_below=0.0, abstain_below=0.5094, flag_below=0.6685)


def judged(index: Index, questions: list[str]) -> tuple[list, list, list]:
    """Each question's evidence as `ask` judges it now (the ranker's order of the first
    RANK_DEPTH hits, names read, the subject and answerability models), with the answerability
    model alone (ALONE), and as before issue 58 (the search's first ten, neither)."""
    now, alone, before = [], [], []
    reference = EvidenceSettings(decline_not_held=False, answerability=False)
    for question in questions:
        hits = index.search(question, k=ranker.RANK_DEPTH, min_relevance=0.0).hits
        ranking = ranker.ranked(index, question, hits)
        now.append(evidence(index, question, ranking.hits, ranking=ranking))
        alone.append(evidence(index, question, ranking.hits, ALONE, ranking=ranking))
        first = [replace(h, answers=None) for h in hits[:10]]
        before.append(evidence(index, question, first, reference))
    return now, alone, before


def share(found: list) -> str:
    declined = [f for f in found if f.mode == ABSTAIN]
    reasons = Counter(str(f.reason) for f in declined)
    top = ", ".join(f"{r} {n}" for r, n in reasons.most_common(3))
    return f"{len(declined) / max(len(found), 1):.3f} ({top})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--limit", type=int, default=400, help="questions per set at most")
    args = parser.parse_args()
    rng = random.Random(58)
    answerable = [q["Question"] for q in load_questions(DATA / "obliqa") if held_out(q)]
    named, neighbouring = people_questions(test=True)
    named_fitted, neighbouring_fitted = people_questions(test=False)
    elsewhere = [r["question"] for r in elsewhere_rows() if split_of(r) == "test"]
    sets = {
        "ObliQA held-out answerable (abstained: lower is better)": answerable,
        "named foreign laws, test split (abstained: higher is better)": named,
        "neighbouring, no law named, test split (abstained: higher is better)": neighbouring,
        "named foreign laws, train and tune (fitted on)": named_fitted,
        "neighbouring, no law named, train and tune (fitted on)": neighbouring_fitted,
        "subjects no index here holds, test topics (abstained: higher is better)": elsewhere,
    }
    index = Index.open(args.index)
    index.search("warm up", k=1)
    print(
        "| set | n | abstained now | the answerability model alone (stop 71) | abstained, names "
        "not read (reference) |"
    )
    print("|---|---|---|---|---|")
    for name, questions in sets.items():
        chosen = rng.sample(questions, min(args.limit, len(questions)))
        now, alone, before = judged(index, chosen)
        print(
            f"| {name} | {len(chosen)} | {share(now)} | {share(alone)} | {share(before)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
