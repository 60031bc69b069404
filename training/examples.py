"""Every example the two judgement models train and are measured on, written once to one file
(issue 37), so that the training run needs only torch and a tokenizer, on any machine.

    .venv/bin/python -m training.examples [--data ../shared/data] [--out training/out/examples.jsonl.gz]
        [--tasks nli,rel] [--contracts benchmarks/out/contracts/index-txt]

Runs in the project's environment: choosing a whole NDA's spans uses the local embedder (as
`lexkb.answers` reads a document) and hard negatives for relevance use BM25 (bm25s). Each line
is one (first, second, label) example with its task, split and group:

Support (`nli`: 0 Entailment, 1 Contradiction, 2 NotMentioned):
- `train`/`valid`: train.csv's pairs, one NDA in ten held out as `valid` (seed 7); per pair two
  hard negatives (another hypothesis's evidence in the same NDA, NotMentioned); the pair's
  evidence read among 2-8 other spans of its NDA in shuffled order, since a document is read as
  several retrieved spans at once; and each Entailment or Contradiction pair again with its
  hypothesis negated ("shall" <-> "shall not", "may" -> "shall not") and the label swapped, since
  ContractNLI's 17 hypotheses alone teach that a span on the same subject entails, whatever the
  claim's polarity.
- `train`: the 50 train NDAs read as lexkb reads a document: the hypothesis's 16 nearest spans by
  the local embedder, each evidence span alone with its label and the first eight others as
  NotMentioned, and the nearest 4, 8 and 12 joined (nearest first) with the NDA's label, or
  NotMentioned when none of its evidence is among them.
- `train`: XRefRAG train's gold answers (ADGM and UK PRA, Apache-2.0), sentence by sentence: a
  sentence tagged with one passage is a true claim in an answer's own words, Entailment against
  that passage, NotMentioned against the same regulator's passage BM25 finds nearest among
  other items', and, with a modal verb to negate, Contradiction when negated. Regulatory
  language, and premises where "not less than" states what the claim says.
- `xref_dev`: XRefRAG dev's one-passage sentences against their passages (Entailment), to see
  how the model reads true paraphrases it never trained on.
- `dev_pairs`: ContractNLI dev's pairs (evaluation_data/contractnli.py); `dev_nda`: each dev NDA and
  hypothesis as `train` reads the 50 NDAs, labelled with the NDA's label (group "NDA|n", form
  "s<rank>" for a span, "c<k>" for the nearest k joined). Dev is never trained on.

Relevance (`rel`: 1 the passage answers the question, 0 not):
- `train`: ObliQA dev's tune half (sha256(QuestionID) even) with its gold passages, six
  passages BM25 ranks 2-30 that are not gold and two drawn at random among passages of at least
  25 words (the first model also drew headings, and learnt that a short passage does not
  answer); XRefRAG train's ADGM and UK PRA questions with the two passages that answer them,
  six of the same regulator's passages BM25 finds and are neither, and three of the other
  regulator's (a neighbouring regime's rule does not answer the question).
- `train`, foreign questions: CUAD's 41 category descriptions, 300 clauses marked in the tune
  half's contracts and the out-of-scope questions written for abstention's tuning
  (benchmarks/questions/out_of_scope_tune.txt), each against the three ADGM passages BM25 ranks
  first (not answers: a rulebook does not answer a contract's question).
- `train` and `cuad_valid`, and the clause head's rows (`clause`): training/cuad_examples.py,
  CUAD's tune half only.
- `obliqa_eval`: the held-out half's BM25 top 30, labelled by gold (group = QuestionID, `gold`
  = how many gold passages it has), to measure reranking.

`--tasks rel` writes only the relevance rows (seconds, no embedder). `--people INDEX` adds the
people's questions' rows (training/people_examples.py: `train` and `people_tune`; a few minutes).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import zipfile
from pathlib import Path

import numpy as np

from evaluation_data.contractnli import LABELS, Pair, dev_pairs, hard_negatives, train_pairs
from evaluation_data.cuad import descriptions
from evaluation_data.questions import written_questions
from training.cuad_examples import cuad_examples, tune_clause_spans
from training.people_examples import people_relevance_examples

REPO = Path(__file__).resolve().parents[1]


SEED = 7
MIN_WORDS = 25
FOREIGN_CLAUSES = 300
CANDIDATES = 16
JOINED = (4, 8, 12)
NOT_MENTIONED = LABELS.index("NotMentioned")


def example(task, split, first, second, label, group="", **extra) -> dict:
    return {
        "task": task,
        "split": split,
        "first": first,
        "second": second,
        "label": label,
        "group": group,
        **extra,
    }


# -- support ----------------------------------------------------------------------------------
def lines_of(premise: str) -> list[str]:
    return [line.strip() for line in premise.split("\n") if line.strip()]


_NEGATIONS = (
    (re.compile(r"\b(shall|may|must|will) not\b"), r"\1"),
    (re.compile(r"\b(shall|must|will)\b"), r"\1 not"),
    (re.compile(r"\bmay\b"), "shall not"),
)
ENTAILMENT, CONTRADICTION = LABELS.index("Entailment"), LABELS.index("Contradiction")


def negated(pairs: list[Pair]) -> list[Pair]:
    """Entailment and Contradiction pairs with the hypothesis's first modal negated (or its
    negation dropped) and the label swapped; hypotheses with no modal verb are left out."""
    out = []
    for pair in pairs:
        if pair.label not in (ENTAILMENT, CONTRADICTION):
            continue
        for pattern, replacement in _NEGATIONS:
            if pattern.search(pair.hypothesis):
                hypothesis = pattern.sub(replacement, pair.hypothesis, count=1)
                label = CONTRADICTION if pair.label == ENTAILMENT else ENTAILMENT
                out.append(Pair(pair.premise, hypothesis, label, pair.nda))
                break
    return out


def among_others(pairs: list[Pair], rng: random.Random) -> list[Pair]:
    """Each pair's evidence shuffled among 2-8 other spans of its NDA."""
    by_nda: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_nda.setdefault(pair.nda, []).append(pair)
    out = []
    for block in by_nda.values():
        pool = sorted({line for pair in block for line in lines_of(pair.premise)})
        for pair in block:
            own = lines_of(pair.premise) if pair.label != NOT_MENTIONED else []
            others = [line for line in pool if line not in own]
            chosen = rng.sample(others, min(rng.randint(2, 8), len(others)))
            lines = own + chosen
            rng.shuffle(lines)
            out.append(Pair("\n".join(lines), pair.hypothesis, pair.label, pair.nda))
    return out


def nda_readings(path: Path) -> list[tuple[str, int, str, int, list[str], list[bool]]]:
    """(NDA id, hypothesis number, hypothesis, label, its nearest spans, which are evidence)."""
    from lexkb.core.embed.sentence_vectors import sentence_vectors

    raw = json.loads(path.read_text(encoding="utf-8"))
    hypotheses = {key: value["hypothesis"] for key, value in raw["labels"].items()}
    out = []
    for document in raw["documents"]:
        spans = [document["text"][a:b].strip() for a, b in document["spans"]]
        kept = [i for i, s in enumerate(spans) if s]
        vectors = sentence_vectors([spans[i] for i in kept])
        annotations = document["annotation_sets"][0]["annotations"]
        for key in sorted(annotations, key=lambda k: int(k.split("-")[1])):
            annotation = annotations[key]
            label = LABELS.index(annotation["choice"])
            evidence = set(annotation["spans"]) if label != NOT_MENTIONED else set()
            near = np.argsort(-(vectors @ sentence_vectors([hypotheses[key]])[0]))[:CANDIDATES]
            chosen = [kept[i] for i in near]
            out.append(
                (
                    str(document["id"]),
                    int(key.split("-")[1]),
                    hypotheses[key],
                    label,
                    [spans[i] for i in chosen],
                    [i in evidence for i in chosen],
                )
            )
    return out


_TAGGED = re.compile(r"[^\[]+?(?:\s*\[#(?:SRC|TGT):[^\]]+\])+")
_TAG = re.compile(r"\s*\[#(SRC|TGT):[^\]]+\]")


def answer_claims(item: dict) -> list[tuple[str, str]]:
    """(claim, cited passage) for each sentence of a gold answer tagged with one passage."""
    passages = {"SRC": item["source_text"], "TGT": item["target_text"]}
    out = []
    for sentence in _TAGGED.findall(item["gold_answer"]):
        kinds = set(re.findall(r"\[#(SRC|TGT):", sentence))
        text = _TAG.sub("", sentence).strip()
        if len(kinds) == 1 and len(text.split()) >= 6:
            out.append((text, passages[kinds.pop()]))
    return out


def xrefrag_items(data: Path, split: str) -> dict[str, list[dict]]:
    return {
        regime: [
            json.loads(line)
            for line in (data / "xrefrag" / f"{regime}-{split}.jsonl").read_text().splitlines()
            if line.strip()
        ]
        for regime in ("ADGM", "UKFIN")
    }


def paraphrase_examples(data: Path) -> list[dict]:
    out = []
    for rows in xrefrag_items(data, "train").values():
        pool = sorted({t for item in rows for t in (item["source_text"], item["target_text"])})
        index = Bm25(pool)
        pairs = [(item, *found) for item in rows for found in answer_claims(item)]
        nearest = index.top([claim for _, claim, _ in pairs], 4)
        for (item, claim, passage), near in zip(pairs, nearest, strict=True):
            group = f"xref-{item['item_id']}"
            own = {normal(item["source_text"]), normal(item["target_text"])}
            out.append(example("nli", "train", claim, passage, ENTAILMENT, group))
            other = next((pool[int(i)] for i in near if normal(pool[int(i)]) not in own), None)
            if other is not None:
                out.append(example("nli", "train", claim, other, NOT_MENTIONED, group))
            for flipped in negated([Pair(passage, claim, ENTAILMENT, group)]):
                out.append(
                    example("nli", "train", flipped.hypothesis, passage, flipped.label, group)
                )
    for rows in xrefrag_items(data, "dev").values():
        for item in rows:
            for claim, passage in answer_claims(item):
                out.append(example("nli", "xref_dev", claim, passage, ENTAILMENT, item["item_id"]))
    return out


def support_examples(data: Path) -> list[dict]:
    rng = random.Random(SEED)
    every = train_pairs(data)
    ndas = sorted({p.nda for p in every})
    held = set(random.Random(SEED).sample(ndas, len(ndas) // 10))
    out = []
    for split, pairs in (
        ("train", [p for p in every if p.nda not in held]),
        ("valid", [p for p in every if p.nda in held]),
    ):
        extra = [*hard_negatives(pairs, 2, SEED), *among_others(pairs, rng), *negated(pairs)]
        for pair in [*pairs, *extra]:
            out.append(example("nli", split, pair.hypothesis, pair.premise, pair.label, pair.nda))
    for nda, number, hypothesis, label, spans, evidence in nda_readings(
        data / "contractnli" / "train-documents.json"
    ):
        group = f"{nda}|{number}"
        others = 0
        for span, is_evidence in zip(spans, evidence, strict=True):
            if is_evidence:
                out.append(example("nli", "train", hypothesis, span, label, group))
            elif others < 8:
                others += 1
                out.append(example("nli", "train", hypothesis, span, NOT_MENTIONED, group))
        for k in JOINED:
            shown = label if any(evidence[:k]) or label == NOT_MENTIONED else NOT_MENTIONED
            out.append(example("nli", "train", hypothesis, "\n".join(spans[:k]), shown, group))
    for pair in dev_pairs(data):
        out.append(example("nli", "dev_pairs", pair.hypothesis, pair.premise, pair.label, pair.nda))
    for nda, number, hypothesis, label, spans, _ in nda_readings(data / "contractnli" / "dev.json"):
        group = f"{nda}|{number}"
        for rank, span in enumerate(spans):
            out.append(example("nli", "dev_nda", hypothesis, span, label, group, form=f"s{rank}"))
        for k in JOINED:
            premise = "\n".join(spans[:k])
            out.append(example("nli", "dev_nda", hypothesis, premise, label, group, form=f"c{k}"))
    return out


# -- relevance --------------------------------------------------------------------------------
def obliqa_passages(data: Path) -> list[tuple[tuple[str, str], str]]:
    out = []
    with zipfile.ZipFile(data / "obliqa" / "StructuredRegulatoryDocuments.zip") as archive:
        for name in sorted(archive.namelist()):
            if name.endswith(".json") and not name.startswith("__MACOSX"):
                for row in json.loads(archive.read(name)):
                    if row["Passage"].strip():
                        out.append(
                            ((str(row["DocumentID"]), str(row["PassageID"])), row["Passage"])
                        )
    return out


class Bm25:
    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self.texts = texts
        self.index = bm25s.BM25()
        self.index.index(
            bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
        )

    def top(self, queries: list[str], k: int) -> np.ndarray:
        import bm25s

        tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False)
        found, _ = self.index.retrieve(tokens, k=min(k, len(self.texts)), show_progress=False)
        return found


def tune_half(question_id: str) -> bool:
    return int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2 == 0


def normal(text: str) -> str:
    return " ".join(text.lower().split())


def relevance_examples(data: Path) -> list[dict]:
    rng = random.Random(SEED)
    passages = obliqa_passages(data)
    keys = [key for key, _ in passages]
    texts = [text for _, text in passages]
    adgm = Bm25(texts)
    # Random negatives are passages of at least MIN_WORDS words: many of ObliQA's shortest
    # passages are headings, and drawing them taught the first model that short means "no".
    long_ones = [i for i, text in enumerate(texts) if len(text.split()) >= MIN_WORDS]
    questions = json.loads((data / "obliqa" / "questions-dev.json").read_text(encoding="utf-8"))
    found = adgm.top([q["Question"] for q in questions], 30)
    out = []
    for question, ranked in zip(questions, found, strict=True):
        gold = {(str(p["DocumentID"]), str(p["PassageID"])) for p in question["Passages"]}
        qid = question["QuestionID"]
        if tune_half(qid):
            for passage in question["Passages"]:
                out.append(
                    example("rel", "train", question["Question"], passage["Passage"], 1, qid)
                )
            wrong = [int(i) for i in ranked[1:] if keys[int(i)] not in gold]
            extra = rng.sample(long_ones, 2)
            for i in [*rng.sample(wrong, min(6, len(wrong))), *extra]:
                if keys[i] not in gold:
                    out.append(example("rel", "train", question["Question"], texts[i], 0, qid))
        else:
            for rank, i in enumerate(int(i) for i in ranked):
                out.append(
                    example(
                        "rel",
                        "obliqa_eval",
                        question["Question"],
                        texts[i],
                        int(keys[i] in gold),
                        qid,
                        rank=rank,
                        gold=len(gold),
                    )
                )
    foreign = [
        *descriptions(data).values(),
        *tune_clause_spans(data, FOREIGN_CLAUSES),
        *written_questions("out_of_scope_tune.txt"),
    ]
    for query, ranked in zip(foreign, adgm.top(foreign, 3), strict=True):
        for i in ranked:
            out.append(example("rel", "train", query, texts[int(i)], 0, "foreign"))
    items = {
        regime: [
            json.loads(line)
            for line in (data / "xrefrag" / f"{regime}-train.jsonl").read_text().splitlines()
            if line.strip()
        ]
        for regime in ("ADGM", "UKFIN")
    }
    pools = {
        regime: sorted({t for item in rows for t in (item["source_text"], item["target_text"])})
        for regime, rows in items.items()
    }
    indexes = {regime: Bm25(pool) for regime, pool in pools.items()}
    for regime, rows in items.items():
        other = "UKFIN" if regime == "ADGM" else "ADGM"
        own_top = indexes[regime].top([r["question"] for r in rows], 12)
        other_top = indexes[other].top([r["question"] for r in rows], 3)
        for item, mine, theirs in zip(rows, own_top, other_top, strict=True):
            answers = {normal(item["source_text"]), normal(item["target_text"])}
            group = f"xref-{item['item_id']}"
            for text in (item["source_text"], item["target_text"]):
                out.append(example("rel", "train", item["question"], text, 1, group))
            near = [pools[regime][int(i)] for i in mine]
            near = [t for t in near if normal(t) not in answers][:6]
            for text in [*near, *(pools[other][int(i)] for i in theirs)]:
                out.append(example("rel", "train", item["question"], text, 0, group))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=REPO / "training" / "out" / "examples.jsonl.gz")
    parser.add_argument(
        "--contracts",
        type=Path,
        default=REPO / "benchmarks" / "out" / "contracts" / "index-txt",
        help="the CUAD TXT index benchmarks/contracts.py builds",
    )
    parser.add_argument("--tasks", default="nli,rel", help="nli, rel or both")
    parser.add_argument(
        "--people",
        type=Path,
        help="the index of the people's question sets' documents: adds their relevance rows "
        "(training/people_examples.py)",
    )
    args = parser.parse_args()
    tasks = set(args.tasks.split(","))
    rows = []
    if "nli" in tasks:
        rows += [*support_examples(args.data), *paraphrase_examples(args.data)]
    if "rel" in tasks:
        rows += relevance_examples(args.data)
        rows += cuad_examples(args.data, args.contracts, example, Bm25)
        if args.people:
            rows += people_relevance_examples(args.people, example)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for row in rows:
        name = f"{row['task']}/{row['split']}"
        counts[name] = counts.get(name, 0) + 1
    print(json.dumps(counts, indent=1))


if __name__ == "__main__":
    main()
