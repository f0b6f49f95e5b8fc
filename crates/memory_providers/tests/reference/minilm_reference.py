#!/usr/bin/env python3
"""Independent reference for the built-in embedder: all-MiniLM-L6-v2 in plain numpy.

Written from the BERT paper / HF BertModel semantics, sharing no code with memory_ext's Rust
path (candle + tokenizers): its own BERT BasicTokenizer + WordPiece, its own safetensors
reader, its own forward pass, mean pooling and L2 normalisation. It writes
`minilm_fixture.json`, which `cargo test -p memory_providers` compares against, to 1e-4 per
dimension.

    python3 minilm_reference.py MODEL_DIR > minilm_fixture.json     (needs numpy)
"""
import json
import math
import struct
import sys
import unicodedata

import numpy as np

SENTENCES = [
    "Hello world.",
    "The user prefers concise answers.",
    "Ana lives in Lisbon and is learning Rust.",
    "Deployment plan: ship v1 by September, then migrate the database.",
    "Café naïve résumé — accents and punctuation!",
    "",
    "東京 is the capital of Japan; 12345 is a number.",
    "a" * 300,
    " ".join(["memory"] * 300),  # longer than 256 tokens: truncated
]
MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length


# ---------------------------------------------------------------- tokenizer (BERT, uncased)

def _is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def _is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c) in ("Cc", "Cf")


def _is_punctuation(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokenize(text):
    out = []
    for c in text:
        cp = ord(c)
        if cp == 0 or cp == 0xFFFD or _is_control(c):
            continue
        if _is_whitespace(c):
            out.append(" ")
        elif _is_cjk(cp):
            out.append(" " + c + " ")
        else:
            out.append(c)
    text = "".join(out).lower()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    words = []
    for w in text.split():
        cur = ""
        for c in w:
            if _is_punctuation(c):
                if cur:
                    words.append(cur)
                    cur = ""
                words.append(c)
            else:
                cur += c
        if cur:
            words.append(cur)
    return words


def wordpiece(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end, cur = len(word), None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab:
                cur = sub
                break
            end -= 1
        if cur is None:
            return ["[UNK]"]
        pieces.append(cur)
        start = end
    return pieces


def encode(text, vocab):
    toks = [p for w in basic_tokenize(text) for p in wordpiece(w, vocab)]
    toks = ["[CLS]"] + toks[: MAX_TOKENS - 2] + ["[SEP]"]
    return [vocab[t] for t in toks]


# ---------------------------------------------------------------- weights

def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        dtype = {"F32": np.float32, "I64": np.int64}[meta["dtype"]]
        out[name] = np.frombuffer(data[a:b], dtype=dtype).reshape(meta["shape"])
    return out


# ---------------------------------------------------------------- model

def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def linear(x, W, prefix):
    return x @ W[prefix + ".weight"].T.astype(np.float64) + W[prefix + ".bias"]


def embed(ids, W, heads=12):
    ids = np.array(ids)
    n = len(ids)
    x = (W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:n]
         + W["embeddings.token_type_embeddings.weight"][0]).astype(np.float64)
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    d = x.shape[1] // heads
    for i in range(6):
        p = f"encoder.layer.{i}."
        q = linear(x, W, p + "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = linear(x, W, p + "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = linear(x, W, p + "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        x = layer_norm(linear(ctx, W, p + "attention.output.dense") + x,
                       W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
        h = gelu(linear(x, W, p + "intermediate.dense"))
        x = layer_norm(linear(h, W, p + "output.dense") + x,
                       W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)  # one sentence, no padding: every token counts
    return pooled / np.linalg.norm(pooled)


def main():
    model_dir = sys.argv[1]
    vocab = {}
    with open(model_dir + "/vocab.txt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab[line.rstrip("\n")] = i
    W = load_safetensors(model_dir + "/model.safetensors")
    cases = []
    for s in SENTENCES:
        ids = encode(s, vocab)
        cases.append({"text": s, "token_ids": ids, "embedding": [round(float(v), 7) for v in embed(ids, W)]})
    json.dump({"model": "all-MiniLM-L6-v2", "max_tokens": MAX_TOKENS, "cases": cases}, sys.stdout, indent=None)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
