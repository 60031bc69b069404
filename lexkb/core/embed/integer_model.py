"""The local embedder's model with integer matrix products, for embedding queries.

The packaged all-MiniLM-L6-v2 stores its weights as int8 with one scale per output column, but
multiplies in float32: each weight is cast and scaled back first (Cast, Mul), and onnxruntime
folds that into float weights, so a query's embedding spends most of its time in float32
products (about 62% of 6-12 ms on this 2-core machine). Here each such product becomes an
integer one: the activations are rounded to uint8 per call (DynamicQuantizeLinear), multiplied
with MatMulInteger by the model's int8 weights halved to 7 bits, and scaled back by the
activation's scale times the column's. onnxruntime fuses these into one kernel. 7 bits, not 8:
without VNNI, onnxruntime's uint8 x int8 kernel adds pairs of products in 16 bits, which
255 x 127 x 2 overflows, so full int8 weights would give other vectors on other CPUs.

Measured on ObliQA (benchmarks/query_model.py, BENCHMARKS.md "Query embedding"): query vectors
at cosine 0.99 to the float model's, about 1.5x faster, retrieval as in BENCHMARKS.md.
Documents are still embedded with the float products at build time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lexkb.core.embed.onnx_fusions import keep_used

if TYPE_CHECKING:  # onnx is imported where the model is rewritten, not with this module
    from onnx import ModelProto, NodeProto, TensorProto


def integer_products(model: ModelProto) -> None:
    """Make every MatMul of `model` (an onnx ModelProto) on a Cast-and-scaled int8 weight an
    integer one, in place."""
    from onnx import helper, numpy_helper

    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    initializers = {i.name: i for i in graph.initializer}
    replaced: dict[int, list[NodeProto]] = {}
    extra_initializers = []
    for position, node in enumerate(graph.node):
        weight = _int8_weight(node, producer, initializers)
        if weight is None:
            continue
        quantized, scale = weight
        name = node.output[0]
        columns = numpy_helper.to_array(initializers[scale]).reshape(-1).astype(np.float32)
        seven = np.rint(numpy_helper.to_array(initializers[quantized]) / 2.0).astype(np.int8)
        column_scale, weights = f"{name}__column_scale", f"{name}__weights"
        extra_initializers.append(numpy_helper.from_array(columns * 2.0, column_scale))
        extra_initializers.append(numpy_helper.from_array(seven, weights))
        replaced[position] = [
            helper.make_node(
                "DynamicQuantizeLinear",
                [node.input[0]],
                [f"{name}__a", f"{name}__a_scale", f"{name}__a_zero"],
            ),
            helper.make_node(
                "MatMulInteger", [f"{name}__a", weights, f"{name}__a_zero"], [f"{name}__int"]
            ),
            helper.make_node("Cast", [f"{name}__int"], [f"{name}__float"], to=1),
            helper.make_node("Mul", [f"{name}__a_scale", column_scale], [f"{name}__scale"]),
            helper.make_node("Mul", [f"{name}__float", f"{name}__scale"], [name]),
        ]
    if not replaced:
        raise ValueError("the model has no int8 weights to multiply with")
    nodes = []
    for position, node in enumerate(graph.node):
        nodes.extend(replaced.get(position, [node]))
    graph.initializer.extend(extra_initializers)
    keep_used(graph, nodes)


def _int8_weight(
    node: NodeProto, producer: dict[str, NodeProto], initializers: dict[str, TensorProto]
) -> tuple[str, str] | None:
    """(int8 weight, per-column scale) initializer names when `node` is a MatMul whose second
    input is Mul(Cast(int8 weight), scale of one row), else None."""
    if node.op_type != "MatMul":
        return None
    scaled = producer.get(node.input[1])
    if scaled is None or scaled.op_type != "Mul" or scaled.input[1] not in initializers:
        return None
    cast = producer.get(scaled.input[0])
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in initializers:
        return None
    weight = initializers[cast.input[0]]
    scale = initializers[scaled.input[1]]
    if weight.data_type != 3 or len(weight.dims) != 2:  # 3: int8
        return None
    if list(scale.dims) not in ([1, weight.dims[1]], [weight.dims[1]]):
        return None
    return cast.input[0], scaled.input[1]
