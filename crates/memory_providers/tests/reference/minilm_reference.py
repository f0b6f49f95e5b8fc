#!/usr/bin/env python3
"""Independent reference for the built-in models in plain numpy: the embedders (all-MiniLM-L6-v2,
mean pooling; bge-small-en-v1.5, [CLS] pooling) and the reranker (ms-marco-MiniLM-L-12-v2, a BERT
cross-encoder: pooler and classifier on [CLS] of "[CLS] query [SEP] text [SEP]").

Written from the BERT paper / HF BertModel semantics, sharing no code with memory_ext's Rust
path (candle + tokenizers): its own BERT BasicTokenizer + WordPiece, its own safetensors
reader, its own forward pass, mean pooling and L2 normalisation. It writes
`minilm_fixture.json`, which `cargo test -p memory_providers` compares against, to 1e-4 per
dimension.

    python3 minilm_reference.py MODEL_DIR > minilm_fixture.json     (needs numpy)
    python3 minilm_reference.py MODEL_DIR cls > bge_fixture.json
    python3 minilm_reference.py MODEL_DIR rerank > rerank_fixture.json
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


def encode_pair(query, text, vocab):
    """[CLS] query [SEP] text [SEP] with segment ids 0 then 1 (short pairs: no truncation)."""
    q = [vocab[p] for w in basic_tokenize(query) for p in wordpiece(w, vocab)]
    t = [vocab[p] for w in basic_tokenize(text) for p in wordpiece(w, vocab)]
    ids = [vocab["[CLS]"]] + q + [vocab["[SEP]"]] + t + [vocab["[SEP]"]]
    return ids, [0] * (len(q) + 2) + [1] * (len(t) + 1)


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


def encoder(ids, W, layers, types=None, heads=12):
    ids = np.array(ids)
    n = len(ids)
    types = np.zeros(n, dtype=int) if types is None else np.array(types)
    x = (W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:n]
         + W["embeddings.token_type_embeddings.weight"][types]).astype(np.float64)
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    d = x.shape[1] // heads
    for i in range(layers):
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
    return x


def embed(ids, W, layers, pooling):
    x = encoder(ids, W, layers)
    # One sentence, no padding: every token counts in the mean.
    pooled = x[0] if pooling == "cls" else x.mean(0)
    return pooled / np.linalg.norm(pooled)


def rerank_score(ids, types, W, layers):
    x = encoder(ids, W, layers, types)
    pooled = np.tanh(linear(x[0], W, "pooler.dense"))
    return float(linear(pooled, W, "classifier")[0])


PAIRS = [
    ("where does Sam live now?", "Sam moved from Boston to Denver in 2024."),
    ("where does Sam live now?", "Sam has a dog named Biscuit."),
    ("what is the capital of France?", "Paris is the capital and largest city of France."),
    ("what is the capital of France?", "The user prefers concise answers."),
    ("which error code did the deploy fail with?", "The deploy failed with error QX-4471."),
]


def main():
    model_dir = sys.argv[1]
    vocab = {}
    with open(model_dir + "/vocab.txt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab[line.rstrip("\n")] = i
    W = load_safetensors(model_dir + "/model.safetensors")
    W = {k[len("bert."):] if k.startswith("bert.") else k: v for k, v in W.items()}
    with open(model_dir + "/config.json") as f:
        config = json.load(f)
    layers = config["num_hidden_layers"]
    mode = sys.argv[2] if len(sys.argv) > 2 else "mean"
    cases = []
    if mode == "rerank":
        for q, t in PAIRS:
            ids, types = encode_pair(q, t, vocab)
            cases.append({"query": q, "text": t, "token_ids": ids, "score": round(rerank_score(ids, types, W, layers), 6)})
    else:
        for s in SENTENCES:
            ids = encode(s, vocab)
            cases.append({"text": s, "token_ids": ids,
                          "embedding": [round(float(v), 7) for v in embed(ids, W, layers, mode)]})
    name = model_dir.rstrip("/").split("/")[-1]
    json.dump({"model": name, "pooling": mode, "max_tokens": MAX_TOKENS, "cases": cases}, sys.stdout, indent=None)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
