"""Weights between the model a run went on from and the one it wrote, measured (issue 58).

    /tmp/trainvenv/bin/python -m training.interpolate --init lexkb/core/judge/models/relevance.onnx
        --weights training/out/rel-people --shares 0.5 0.7 [--write 0.5 --out DIR]

Fine-tuning the shipped relevance model on people's questions (training/train.py `--init`)
teaches it their wording and costs some of what it knew of ObliQA's: a model whose every weight
lies part of the way from the starting one to the fine-tuned one often keeps most of the gain
and little of the loss (Wortsman et al., 2022, "Robust fine-tuning of zero-shot models"). Each
share is measured on the splits training/train.py measures (ObliQA's held-out questions, CUAD's
valid contracts, the people's tune split; never a test split), the same questions for each;
`--write` saves the chosen share's weights where training/export.py reads them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from tokenizers import Tokenizer

from training.export import base_files
from training.minilm import PairClassifier, load_minilm
from training.onnx_weights import load_shipped
from training.train import (
    EVALUATED,
    MAX_TOKENS,
    encode,
    evaluated,
    kept_groups,
    read_examples,
    read_weights,
    save_weights,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--init", type=Path, required=True, help="the shipped int8 ONNX")
    parser.add_argument("--weights", type=Path, required=True, help="training/train.py's --out")
    parser.add_argument("--examples", type=Path, default=Path("training/out/rel-examples.jsonl.gz"))
    parser.add_argument("--shares", type=float, nargs="*", default=[0.5])
    parser.add_argument("--evaluate-groups", type=int, default=150)
    parser.add_argument("--write", type=float, default=None, help="the share to save")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    base, tokenizer = base_files()
    start = PairClassifier(1)
    load_minilm(start, base)
    load_shipped(start, args.init)
    begun = {name: value.clone() for name, value in start.state_dict().items()}
    tuned = {name: value.float() for name, value in read_weights(args.weights).items()}
    model = PairClassifier(1)

    def at(share: float) -> PairClassifier:
        mixed = {
            name: value if name not in tuned else (1 - share) * value + share * tuned[name]
            for name, value in begun.items()
        }
        model.load_state_dict(mixed)
        return model.eval()

    if args.write is not None:
        assert args.out is not None, "--write needs --out"
        args.out.mkdir(parents=True, exist_ok=True)
        save_weights(at(args.write), args.out)
        print(f"share {args.write} written to {args.out}")
        return
    splits = read_examples(args.examples, "rel")
    splits = {
        name: kept_groups(splits[name], args.evaluate_groups)
        for name in EVALUATED["rel"]
        if name in splits
    }
    tok = Tokenizer.from_file(str(tokenizer))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS["rel"], strategy="only_second")
    encoded = {name: encode(tok, rows) for name, rows in splits.items()}
    cpu = torch.device("cpu")
    for share in args.shares:
        print(json.dumps({"share": share} | evaluated(at(share), encoded, splits, cpu, "rel")))


if __name__ == "__main__":
    main()
