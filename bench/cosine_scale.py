#!/usr/bin/env python3
"""Measures each built-in model's cosine scale against all-MiniLM-L6-v2's
(crates/memory_core/src/cosine.rs; docs/retrieval.md "Cosine scales").

For every conversation of a LoCoMo-format file, each turn ("speaker: text", as the eval writes
it) is embedded with memory_embed, and its cosine to its nearest other turn of the same
conversation is taken. The quantiles p10..p95, p99 and p99.5 of a model's nearest-neighbour
cosines are fitted by a line against MiniLM's (least squares): reference = offset + slope *
cosine. The same is done for question-to-turn cosines, which searches compare (a query prefix
shifts them: a line of their own).
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
    md = ["# Cosine scales of the built-in models (`bench/cosine_scale.py`)", "",
          f"{os.path.basename(a.data)}: {len(ref_nn)} turns, each one's nearest other turn of its "
          f"conversation; {len(ref_qt)} question-turn pairs. reference = offset + slope * cosine, "
          f"fitted on the quantiles p10-p99.5 against {REFERENCE}'s: the turns' nearest-neighbour cosines, and the question-turn cosines.", "",
          "| model | nn p50 | nn p75 | nn p99.5 | turns: offset, slope (largest miss) | question-turn p50 | questions: offset, slope (largest miss) |",
          "|---|---|---|---|---|---|---|"]

    def fit(ref, mine):
        qa, qb = np.percentile(ref, QUANTILES), np.percentile(mine, QUANTILES)
        slope, offset = np.polyfit(qb, qa, 1)
        return offset, slope, float(np.abs(offset + slope * qb - qa).max())

    def row(model, nn, qt, turns, questions):
        p = np.percentile(nn, [50, 75, 99.5])
        md.append(f"| {model} | {p[0]:.3f} | {p[1]:.3f} | {p[2]:.3f} | "
                  f"{turns[0]:.4f}, {turns[1]:.4f} ({turns[2]:.4f}) | {np.median(qt):.3f} | "
                  f"{questions[0]:.4f}, {questions[1]:.4f} ({questions[2]:.4f}) |")
    row(REFERENCE, ref_nn, ref_qt, (0.0, 1.0, 0.0), (0.0, 1.0, 0.0))
    for model in a.models.split(","):
        nn, qt = measure(db, model, data)
        # Two lines: turn to turn (what writes compare: dedupe, links, consent, consolidation)
        # and question to turn (what searches compare), a query prefix shifting the second.
        row(model, nn, qt, fit(ref_nn, nn), fit(ref_qt, qt))
    text = "\n".join(md) + "\n"
    open(os.path.join(a.out, "cosine-scale.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
