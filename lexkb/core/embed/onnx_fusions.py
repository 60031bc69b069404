"""Fused attention and GELU for the local embedder's model, at build time and for queries.

The packaged all-MiniLM-L6-v2 was exported op by op: each layer's attention is about 30 small
nodes (Reshape, Transpose, Slice, Concat, Shape, a Where for the mask, Softmax, an IsNaN guard)
around its two products, and each GELU is five. onnxruntime's own fusions do not recognise this
export, and neither does its transformers optimizer, so a one-question embedding spent about a
third of its time in that plumbing. Here each is one contrib op:
com.microsoft.MultiHeadAttention on the projected query, key and value, and com.microsoft.Gelu:
14% faster for queries and for the build's batches of paragraphs (benchmarks/fusion.py,
BENCHMARKS.md "Fused attention and GELU"). The fused float model's token states match the
unfused one's to cosine 0.99999 (tests/query/test_dense_scan.py), padded batches included, so
documents embedded either way get the same vectors.

A pattern that does not match is left as it was, so an unexpected export is only slower.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # onnx is imported where a model is rewritten, not with this module
    from onnx import GraphProto, ModelProto, NodeProto

CONTRIB = "com.microsoft"


def keep_used(graph: GraphProto, nodes: list[NodeProto]) -> None:
    """Set `graph`'s nodes to those of `nodes` whose outputs are used, and drop initializers no
    node reads: a rewrite leaves the nodes it replaced, and their weights, behind."""
    outputs = {o.name for o in graph.output}
    while True:
        read = outputs | {name for node in nodes for name in node.input}
        used = [node for node in nodes if any(out in read for out in node.output)]
        if len(used) == len(nodes):
            break
        nodes = used
    del graph.node[:]
    graph.node.extend(nodes)
    read = {name for node in nodes for name in node.input}
    kept = [i for i in graph.initializer if i.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)


class _Graph:
    """Who makes and who reads each value, and the scalar constants, of one graph."""

    def __init__(self, graph: GraphProto) -> None:
        from onnx import numpy_helper

        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list[NodeProto]] = defaultdict(list)
        for node in graph.node:
            for name in node.input:
                self.consumers[name].append(node)
        self.scalars = {
            i.name: float(numpy_helper.to_array(i).reshape(()))
            for i in graph.initializer
            if int(np.prod(i.dims)) == 1
        }

    def only_reader(self, name: str, op_type: str) -> NodeProto | None:
        readers = self.consumers.get(name, [])
        if len(readers) == 1 and readers[0].op_type == op_type:
            return readers[0]
        return None

    def projection(self, name: str) -> tuple[str, float] | None:
        """(the projected tensor, its scale factor) that `name` was made from by reshaping,
        transposing and multiplying by scalars: a head-split query, key or value, back to the
        [batch, sequence, hidden] output of its linear layer (the Add of its bias)."""
        scale = 1.0
        while (node := self.producer.get(name)) is not None:
            if node.op_type in ("Reshape", "Transpose"):
                name = node.input[0]
            elif node.op_type == "Mul" and node.input[1] in self.scalars:
                scale *= self.scalars[node.input[1]]
                name = node.input[0]
            elif node.op_type == "Add":
                return name, scale
            else:
                return None
        return None


def fuse_attention(model: ModelProto, heads: int, mask: str = "attention_mask") -> int:
    """Replace each softmax attention in `model` with MultiHeadAttention; returns how many.

    The pattern, from its Softmax: scores = MatMul(q, k) (+ the mask's bias), probabilities
    (through an optional IsNaN guard) times v, then Transpose and Reshape back to
    [batch, sequence, hidden]. q, k and v are traced back to their projections, and the scalar
    factors on q and k become the op's scale. The mask is the model's input, as the key padding
    mask."""
    from onnx import helper

    graph = model.graph
    seen = _Graph(graph)
    padding = f"{mask}__int32"
    replaced: dict[int, NodeProto] = {}
    for softmax in graph.node:
        if softmax.op_type != "Softmax":
            continue
        fused = _attention(seen, softmax, heads, padding)
        if fused is not None:
            end, node = fused
            replaced[id(end)] = node
    if replaced:
        cast = helper.make_node("Cast", [mask], [padding], to=6)  # 6: int32
        keep_used(graph, [cast] + [replaced.get(id(n), n) for n in graph.node])
        _use_contrib(model)
    return len(replaced)


def _attention(
    seen: _Graph, softmax: NodeProto, heads: int, padding: str
) -> tuple[NodeProto, NodeProto] | None:
    """(the node the fused op replaces, the fused op) for one Softmax, or None."""
    from onnx import helper

    biased = seen.producer.get(softmax.input[0])
    if biased is None or biased.op_type != "Add":
        return None
    scores = seen.producer.get(biased.input[0])
    if scores is None or scores.op_type != "MatMul":
        return None
    probabilities = softmax.output[0]
    guard = [n for n in seen.consumers[probabilities] if n.op_type == "IsNaN"]
    if guard:  # Where(IsNaN(p), 0, p): zeros for a fully masked row
        where = seen.only_reader(guard[0].output[0], "Where")
        if where is None or len(seen.consumers[probabilities]) != 2:
            return None
        probabilities = where.output[0]
    weighted = seen.only_reader(probabilities, "MatMul")
    if weighted is None or weighted.input[0] != probabilities:
        return None
    transpose = seen.only_reader(weighted.output[0], "Transpose")
    reshape = transpose and seen.only_reader(transpose.output[0], "Reshape")
    q, k, v = (seen.projection(n) for n in (scores.input[0], scores.input[1], weighted.input[1]))
    if reshape is None or q is None or k is None or v is None:
        return None
    (query, q_scale), (key, k_scale), (value, _) = q, k, v
    node = helper.make_node(
        "MultiHeadAttention",
        [query, key, value, "", padding],
        [reshape.output[0]],
        domain=CONTRIB,
        num_heads=heads,
        scale=q_scale * k_scale,
    )
    return reshape, node


def fuse_gelu(model: ModelProto) -> int:
    """Replace each exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), with com.microsoft.Gelu;
    returns how many."""
    from onnx import helper

    graph = model.graph
    seen = _Graph(graph)
    replaced: dict[int, NodeProto] = {}
    for erf in graph.node:
        if erf.op_type != "Erf":
            continue
        divide = seen.producer.get(erf.input[0])
        one = seen.only_reader(erf.output[0], "Add")
        half = one and seen.only_reader(one.output[0], "Mul")
        times = half and seen.only_reader(half.output[0], "Mul")
        if divide is None or divide.op_type != "Div" or not (one and half and times):
            continue
        x = divide.input[0]
        root_two = seen.scalars.get(divide.input[1])
        added = seen.scalars.get(next(i for i in one.input if i != erf.output[0]))
        factor = seen.scalars.get(next(i for i in half.input if i != one.output[0]))
        if root_two is None or added is None or factor is None or x not in times.input:
            continue
        if not np.allclose((root_two, added, factor), (np.sqrt(2.0), 1.0, 0.5)):
            continue
        replaced[id(times)] = helper.make_node("Gelu", [x], [times.output[0]], domain=CONTRIB)
    if replaced:
        keep_used(graph, [replaced.get(id(n), n) for n in graph.node])
        _use_contrib(model)
    return len(replaced)


def _use_contrib(model: ModelProto) -> None:
    from onnx import helper

    if not any(o.domain == CONTRIB for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(CONTRIB, 1))
