"""Export the trained support/contradiction model to the int8 ONNX file lexkb ships (issue 37).

    /tmp/trainvenv/bin/python training/nli_export.py [--weights training/out/nli/best.pt]
        [--out lexkb/core/judge/models/support.onnx] [--data ../shared/data]

The float graph is exported from training/minilm.py's module (inputs `ids`, `segments`, `mask`;
output `logits`), then its matrix weights are quantized to int8 per output channel
(onnxruntime's dynamic quantization: activations quantized per call) in 7 bits, which keeps the
file near a quarter of the float one. 7 bits, not 8: on model B it kept dev macro-F1 at 0.829
where 8 bits gave 0.818 (float 0.851); keeping the head, the last layer or the attention
products in float gained nothing, and one scale per tensor lost 4 points (BENCHMARKS.md). Before it is written, the int8 graph's answers are compared with
the float model's on the ContractNLI dev pairs; the SHA-256 and those figures are printed for
the model card.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import numpy as np
import torch

from training.minilm import PairClassifier
from training.nli_data import LABELS, dev_pairs, macro_f1
from training.nli_train import encode, padded, tokenizer

OPSET = 17


def export(weights: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = PairClassifier(len(LABELS))
    model.load_state_dict(torch.load(weights))
    model.eval()
    ids = torch.ones(2, 16, dtype=torch.long)
    with tempfile.TemporaryDirectory() as folder:
        float_path = Path(folder) / "float.onnx"
        torch.onnx.export(
            model,
            (ids, torch.zeros_like(ids), torch.ones_like(ids)),
            str(float_path),
            input_names=["ids", "segments", "mask"],
            output_names=["logits"],
            dynamic_axes={name: {0: "batch", 1: "length"} for name in ("ids", "segments", "mask")}
            | {"logits": {0: "batch"}},
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


def compare(weights: Path, out: Path, data: Path) -> None:
    import onnxruntime

    pairs = dev_pairs(data)
    model = PairClassifier(len(LABELS))
    model.load_state_dict(torch.load(weights))
    model.eval()
    items = encode(tokenizer(256), pairs)
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    float_top, int8_top = [], []
    for start in range(0, len(items), 32):
        index = list(range(start, min(start + 32, len(items))))
        ids, segments, mask = padded(items, index)
        with torch.no_grad():
            float_top += model(ids, segments, mask).argmax(1).tolist()
        feeds = {"ids": ids.numpy(), "segments": segments.numpy(), "mask": mask.numpy()}
        int8_top += session.run(None, feeds)[0].argmax(1).tolist()
    gold = [p.label for p in pairs]
    agree = float(np.mean(np.array(float_top) == np.array(int8_top)))
    print(
        f"dev macro-F1: float {macro_f1(gold, np.array(float_top))[0]:.4f}, "
        f"int8 {macro_f1(gold, np.array(int8_top))[0]:.4f}; same answer on {agree:.1%}"
    )
    print(
        f"{out}: {out.stat().st_size / 1e6:.1f} MB, SHA-256 {hashlib.sha256(out.read_bytes()).hexdigest()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, default=Path("training/out/nli/best.pt"))
    parser.add_argument("--out", type=Path, default=Path("lexkb/core/judge/models/support.onnx"))
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    args = parser.parse_args()
    export(args.weights, args.out)
    compare(args.weights, args.out, args.data)


if __name__ == "__main__":
    main()
