#!/usr/bin/env python3
"""Measures each built-in model's cosine scale against all-MiniLM-L6-v2's
(crates/memory_core/src/cosine.rs; docs/retrieval.md "Cosine scales").

For every conversation of a LoCoMo-format file, each turn ("speaker: text", as the eval writes
it) is embedded with memory_embed, and its cosine to its nearest other turn of the same
conversation is taken. The quantiles p10..p95, p99 and p99.5 of a model's nearest-neighbour
cosines are fitted by a line against MiniLM's (least squares): reference = offset + slope *
cosine. The same is done for question-to-turn cosines (their spread), which the ranking reads.
The figures go to stdout and bench/results/cosine-scale.md; the texts never leave this process.

    cosine_scale.py --dsn "host=... dbname=..." --data locomo-dev.json [--models m1,m2]

Needs a database with memory_ext and numpy (the eval's Python).
"""
import argparse
import json
import os

import numpy as np
import psycopg

QUANTILES = list(range(10, 100, 5)) + [99, 99.5]
REFERENCE = "all-MiniLM-L6-v2"
QUERY_PREFIX = {"multilingual-e5-small": "query: ",
                "bge-small-en-v1.5": "Represent this sentence for searching relevant passages: "}


def vectors(db, texts):
    out = np.array([json.loads(db.execute("SELECT memory_embed(%s)::text", (t,)).fetchone()[0])
                    for t in texts])
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def measure(db, model, data):
    db.execute(f"SET memory_ext.builtin_model = '{model}'")
    nn, qt = [], []
    for conv in data:
        turns = [f"{t['speaker']}: {t['text']}" for k, v in conv["conversation"].items()
                 if k.startswith("session_") and isinstance(v, list) for t in v]
        t = vectors(db, turns)
        s = t @ t.T
        np.fill_diagonal(s, -1)
        nn.append(s.max(axis=1))
        qs = [QUERY_PREFIX.get(model, "") + q["question"] for q in conv["qa"]
              if q.get("category") in (1, 2, 3, 4)]
        qt.append((vectors(db, qs) @ t.T).ravel())
    return np.concatenate(nn), np.concatenate(qt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--models", default="multilingual-e5-small,bge-small-en-v1.5")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    a = ap.parse_args()
    data = json.load(open(a.data))
    db = psycopg.connect(a.dsn, autocommit=True)
    ref_nn, ref_qt = measure(db, REFERENCE, data)
    qa = np.percentile(ref_nn, QUANTILES)
    md = ["# Cosine scales of the built-in models (`bench/cosine_scale.py`)", "",
          f"{os.path.basename(a.data)}: {len(ref_nn)} turns, each one's nearest other turn of its "
          f"conversation; {len(ref_qt)} question-turn pairs. reference = offset + slope * cosine, "
          f"fitted on the nearest-neighbour quantiles p10-p99.5 against {REFERENCE}'s.", "",
          "| model | nn p50 | nn p75 | nn p99.5 | offset | slope | largest miss | question-turn sd | sd ratio |",
          "|---|---|---|---|---|---|---|---|---|"]

    def row(model, nn, qt, offset, slope, miss):
        p = np.percentile(nn, [50, 75, 99.5])
        md.append(f"| {model} | {p[0]:.3f} | {p[1]:.3f} | {p[2]:.3f} | {offset:.3f} | {slope:.3f} | "
                  f"{miss:.4f} | {qt.std():.3f} | {ref_qt.std() / qt.std():.2f} |")
    row(REFERENCE, ref_nn, ref_qt, 0.0, 1.0, 0.0)
    for model in a.models.split(","):
        nn, qt = measure(db, model, data)
        qb = np.percentile(nn, QUANTILES)
        slope, offset = np.polyfit(qb, qa, 1)
        miss = float(np.abs(offset + slope * qb - qa).max())
        row(model, nn, qt, offset, slope, miss)
    text = "\n".join(md) + "\n"
    open(os.path.join(a.out, "cosine-scale.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
