#!/usr/bin/env python3
"""`make eval-languages`: retrieval in other languages, on LoCoMo turns translated by a local
model (bench/multilingual/translate.py; docs/retrieval.md "Languages").

For each translated language L, two shapes of the same conversation and questions:
- same-language: the turns and the questions in L;
- cross-lingual: the turns in L, the questions in English.
Each is asked two ways on rows written for it, as the eval's turns shape (bench/src/eval):
- before: the English built-in model (all-MiniLM-L6-v2) and every text read by keyword search
  as English (what memory_ext did before 0.13.0; `"language": "en"` on every write);
- now: multilingual-e5-small and each text read in its detected language.
And the English original on the same rows, both ways, for the "within 0.05 of English" goal,
and, where translate.py --back made it, a control: English through the language and back (the
round trip), English text with the losses of a translation, the share of the same-language gap
the translator makes.
Every run reports memory_query, the raw pgvector order and BM25 alone (the eval's rows), as turn
recall@5, turn recall@10 and session recall@5.

Image captions (LoCoMo's `blip_caption`, English in every variant) are left out of every
variant, the English one included, so that the rows differ only in their language.

    eval.py --dsn DSN --data locomo-dev.json --cache DIR --langs de,ja,zh,es --out bench/results
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

SAMPLE = "conv-30"
SESSIONS = 10
MODELS = {"before": ("all-MiniLM-L6-v2", "en"), "now": ("multilingual-e5-small", None)}
ROWS = [("memory_query", "memory_query (all components)"),
        ("raw vector", "raw pgvector order"),
        ("BM25", "BM25 alone")]


def subset(conv):
    """The first SESSIONS sessions of the conversation and the questions whose evidence is in
    them (what translate.py translated), captions left out."""
    c = copy.deepcopy(conv)
    talk = c["conversation"]
    for k in list(talk):
        if k.startswith("session_"):
            n = int(k.split("_")[1])
            if n > SESSIONS:
                del talk[k]
            elif isinstance(talk[k], list):
                for t in talk[k]:
                    t.pop("blip_caption", None)
                    t.pop("img_url", None)
                    t.pop("query", None)
    def kept(e):
        return int(e.split(":")[0].lstrip("D") or 0) <= SESSIONS
    c["qa"] = [dict(q, _index=i) for i, q in enumerate(conv["qa"])
               if q.get("evidence") and all(kept(e) for e in q["evidence"])]
    c.pop("observation", None)
    c.pop("session_summary", None)
    c.pop("event_summary", None)
    return c


def variant(base, tr, sample_id, turns, questions):
    c = copy.deepcopy(base)
    c["sample_id"] = sample_id
    if turns:
        for k, v in c["conversation"].items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    t["text"] = tr["turns"][t["dia_id"]]
    if questions:
        for q in c["qa"]:
            q["question"] = tr["questions"][str(q["_index"])]
    return c


def run(binary, dsn, data, model, language, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, EVAL_MODEL=model)
    env.pop("EVAL_LANGUAGE", None)
    if language:
        env["EVAL_LANGUAGE"] = language
    subprocess.run([binary, "eval", "--dsn", dsn, "--data", data, "--out", out, "--shapes", "turns"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    stem = 'eval' if model == 'all-MiniLM-L6-v2' else f'eval-{model}'
    res = json.load(open(os.path.join(out, f'{stem}-turns.json')))
    configs = res["shapes"][0]["configs"]
    got = {}
    for short, prefix in ROWS:
        c = next(c for c in configs if c["name"].startswith(prefix))
        got[short] = (c["overall"]["tR@5"], c["overall"]["tR@10"], c["overall"]["sR@5"])
    return got, res["questions"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--langs", default="de,ja,zh,es")
    ap.add_argument("--out", required=True)
    ap.add_argument("--binary", required=True)
    a = ap.parse_args()
    conv = next(c for c in json.load(open(a.data)) if c["sample_id"] == SAMPLE)
    base = subset(conv)
    tmp = tempfile.mkdtemp()
    langs = []
    for lang in a.langs.split(","):
        p = os.path.join(a.cache, f"{SAMPLE}.{lang}.json")
        if not os.path.exists(p):
            print(f"{lang}: no translation in {p} (bench/multilingual/translate.py makes it)", file=sys.stderr)
            continue
        tr = json.load(open(p))
        dias = [t["dia_id"] for k, v in base["conversation"].items()
                if k.startswith("session_") and isinstance(v, list) for t in v]
        missing = [d for d in dias if d not in tr["turns"]] + \
                  [q["_index"] for q in base["qa"] if str(q["_index"]) not in tr["questions"]]
        if missing:
            print(f"{lang}: translation incomplete ({len(missing)} missing), left out", file=sys.stderr)
            continue
        back = os.path.join(a.cache, f"{SAMPLE}.{lang}-en.json")
        back = json.load(open(back)) if os.path.exists(back) else None
        if back and any(d not in back["turns"] for d in dias):
            print(f"{lang}: round trip incomplete, its control row left out", file=sys.stderr)
            back = None
        langs.append((lang, tr, back))
    results = []
    for how, (model, language) in MODELS.items():
        variants = [("en", "English (original)", variant(base, None, f"{SAMPLE}-en-{how}", False, False))]
        for lang, tr, back in langs:
            variants.append((lang, "same-language", variant(base, tr, f"{SAMPLE}-{lang}-{how}", True, True)))
            variants.append((lang, "cross-lingual (English questions)",
                             variant(base, tr, f"{SAMPLE}-{lang}x-{how}", True, False)))
            if back:
                variants.append((f"en via {lang}", "round trip (turns and questions to the language and back)",
                                 variant(base, back, f"{SAMPLE}-{lang}rt-{how}", True, True)))
        for lang, shape, data in variants:
            path = os.path.join(tmp, f"{data['sample_id']}.json")
            json.dump([data], open(path, "w"), ensure_ascii=False)
            got, questions = run(a.binary, a.dsn, path, model, language, tmp)
            results.append({"language": lang, "shape": shape, "how": how, "model": model,
                            "questions": questions,
                            **{k: {"tR@5": v[0], "tR@10": v[1], "sR@5": v[2]} for k, v in got.items()}})
            print(lang, shape, how, {k: tuple(round(x, 3) for x in v) for k, v in got.items()}, flush=True)
    md = ["# Retrieval in other languages (`make eval-languages`)", "",
          f"LoCoMo {SAMPLE}, sessions 1-{SESSIONS} ({sum(len(v) for k, v in base['conversation'].items() if k.startswith('session_') and isinstance(v, list))} turns), "
          f"translated by Qwen2.5-Coder-1.5B-Instruct (bench/multilingual/translate.py); questions of categories 1-4 "
          f"with evidence in those sessions. Turn recall@5 / turn recall@10 / session recall@5 (with ten "
          f"sessions, session recall@10 is 1 for any order). before: all-MiniLM-L6-v2, every text "
          f"read as English (memory_ext before 0.13.0); now: multilingual-e5-small, each text in its language.", "",
          "| language | shape | how | questions | memory_query | raw vector | BM25 |", "|---|---|---|---|---|---|---|"]
    for r in results:
        cell = lambda k: f"{r[k]['tR@5']:.3f} / {r[k]['tR@10']:.3f} / {r[k]['sR@5']:.3f}"
        md.append(f"| {r['language']} | {r['shape']} | {r['how']} | {r['questions']} | {cell('memory_query')} | "
                  f"{cell('raw vector')} | {cell('BM25')} |")
    open(os.path.join(a.out, "eval-languages.md"), "w").write("\n".join(md) + "\n")
    json.dump(results, open(os.path.join(a.out, "eval-languages.json"), "w"), indent=1)
    print("\n".join(md))


if __name__ == "__main__":
    main()
