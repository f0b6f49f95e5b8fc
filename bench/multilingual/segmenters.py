#!/usr/bin/env python3
"""Chinese keyword search: character bigrams and single characters (what memory_ext does,
crates/memory_core/src/language.rs `prepare`) against a word segmenter (jieba, the dictionary and
algorithm jieba-rs ports), as BM25 alone over LoCoMo's conv-30 translated into Chinese
(bench/multilingual/translate.py): turn recall@5 of each tokenisation, and how often the best
session by BM25 over its whole text holds the evidence (what the thread signal reads).

A replica in Python (BM25 k1 1.2, b 0.75, every query term once, Latin words lower-cased but
not stemmed), not memory_ext itself: its first row is 0.581 where `make eval-languages`' BM25
alone is 0.617 on the same rows. What it is for is the difference between rows.

    pip install jieba==0.42.1
    segmenters.py --data locomo-dev.json --cache DIR [--lang zh]
"""
import argparse
import collections
import json
import math
import os
import re
import sys

import jieba

sys.path.insert(0, os.path.dirname(__file__))
from eval import SAMPLE, subset  # noqa: E402

jieba.setLogLevel(60)
PUNCT = set("，。！？、：；“”‘’（）《》…—")


def unspaced(c):
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF


def latin(text):
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)]


def bigrams(text, singles=True):
    out, run = [], []

    def flush():
        if len(run) == 1:
            out.append(run[0])
        elif run:
            out.extend(a + b for a, b in zip(run, run[1:]))
            if singles:
                out.extend(run)
        run.clear()

    for c in text:
        if unspaced(c):
            run.append(c)
        else:
            flush()
    flush()
    return out + latin(text)


def words(text, search=False):
    ws = jieba.lcut_for_search(text) if search else jieba.lcut(text)
    return [w.lower() for w in ws if w.strip() and not all(c in PUNCT or not c.isalnum() for c in w)]


TOKENISATIONS = [
    ("bigrams and single characters (memory_ext)", bigrams),
    ("bigrams alone", lambda t: bigrams(t, singles=False)),
    ("jieba words", words),
    ("jieba search mode (words and their parts)", lambda t: words(t, True)),
    ("jieba words, bigrams and single characters", lambda t: words(t) + bigrams(t)),
]


def bm25(docs, query):
    n = len(docs)
    avg = sum(map(len, docs)) / n
    df = collections.Counter(w for d in docs for w in set(d))
    tfs = [collections.Counter(d) for d in docs]
    scores = []
    for i, (d, tf) in enumerate(zip(docs, tfs)):
        s = 0.0
        for w in set(query):
            if w in tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * len(d) / avg))
        scores.append((s, -i))
    return [-i for _, i in sorted(scores, reverse=True)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--lang", default="zh")
    a = ap.parse_args()
    conv = next(c for c in json.load(open(a.data)) if c["sample_id"] == SAMPLE)
    base = subset(conv)
    tr = json.load(open(os.path.join(a.cache, f"{SAMPLE}.{a.lang}.json")))
    turns = [(t["dia_id"], tr["turns"][t["dia_id"]]) for k, v in base["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]
    # Categories 1-4, as the eval asks (5, adversarial, has no answer to find).
    qs = [(tr["questions"][str(q["_index"])], set(q["evidence"])) for q in base["qa"]
          if q.get("category") in (1, 2, 3, 4)]
    print(f"{len(turns)} turns, {len(qs)} questions ({a.lang})")
    print("| tokenisation | BM25 turn recall@5 | best session by BM25 holds evidence |")
    print("|---|---|---|")
    for name, tok in TOKENISATIONS:
        docs = [tok(t) for _, t in turns]
        sessions = collections.defaultdict(list)
        for (d, _), toks in zip(turns, docs):
            sessions[d.split(":")[0]].extend(toks)
        names = list(sessions)
        recall = best = 0.0
        for q, ev in qs:
            top = [turns[i][0] for i in bm25(docs, tok(q))[:5]]
            recall += len(ev & set(top)) / len(ev)
            first = names[bm25([sessions[s] for s in names], tok(q))[0]]
            best += first in {e.split(":")[0] for e in ev}
        print(f"| {name} | {recall / len(qs):.3f} | {best / len(qs):.3f} |")


if __name__ == "__main__":
    main()
