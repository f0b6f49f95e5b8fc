#!/usr/bin/env python3
"""Translates a LoCoMo conversation (its turns and its questions) into other languages with a
local model, for the multilingual shapes of the retrieval eval (bench/multilingual/README.md).

    translate.py --data locomo-dev.json --sample conv-30 --langs de,es,zh,ja --out DIR

The model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) run by llama.cpp's own server
(xllamacpp, in-process, 127.0.0.1), both from PyPI (scripts/llm.py says which
wheels and why they are for measurements only). Each turn and each question is translated on its
own (no batching: a small model merges or drops lines of a list), greedy, with the names kept.
Results go to DIR/<sample>.<lang>.json, {"turns": {dia_id: text}, "questions": {index: text}},
written after every item so that an interrupted run resumes where it stopped. The LoCoMo
licence (CC BY-NC) forbids nothing here, but its text and translations stay outside the
repository: DIR is a cache (scripts/lib.sh's MEMORY_EXT_HOME by default).
"""
import argparse
import json
import os
import sys
import time
import urllib.request

NAMES = {"de": "German", "es": "Spanish", "zh": "Simplified Chinese", "ja": "Japanese",
         "fr": "French", "pt": "Portuguese", "it": "Italian", "ru": "Russian"}
# The model and its server: scripts/llm.py (the 22 chunks joined and hash checked, llama.cpp's
# server in this process).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import llm  # noqa: E402


# One worked example: without it the 1.5B model left English words in German sentences and
# slipped into Chinese (checked by hand on the first questions of conv-30).
EXAMPLE = ("Where did Maria go last summer?", {
    "de": "Wohin ist Maria letzten Sommer gefahren?", "es": "¿Adónde fue María el verano pasado?",
    "zh": "玛丽亚去年夏天去了哪里？", "ja": "マリアは去年の夏どこに行きましたか？",
    "fr": "Où Maria est-elle allée l'été dernier ?", "pt": "Para onde a Maria foi no verão passado?",
    "it": "Dove è andata Maria l'estate scorsa?", "ru": "Куда Мария ездила прошлым летом?"})


def translate(port, text, lang, back=False):
    """`text` into `lang`, or with `back` from `lang` into English (the round trip's way home)."""
    source, target = ("English", NAMES[lang]) if not back else (NAMES[lang], "English")
    example = (EXAMPLE[0], EXAMPLE[1][lang]) if not back else (EXAMPLE[1][lang], EXAMPLE[0])
    ask = f"Translate into {target}:\n"
    body = {
        "messages": [
            {"role": "system", "content": f"You are a professional translator from {source} to {target}."},
            {"role": "user", "content": ask + example[0]},
            {"role": "assistant", "content": example[1]},
            {"role": "user", "content": ask + text},
        ],
        "temperature": 0,
        "max_tokens": 64 + 3 * len(text) // 2,
    }
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)["choices"][0]["message"]["content"].strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--langs", default="de,es,zh,ja")
    ap.add_argument("--out", required=True)
    ap.add_argument("--port", type=int, default=61470)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--back", action="store_true",
                    help="translate each <sample>.<lang>.json back into English, to <sample>.<lang>-en.json: "
                         "the round trip, English with the translator's losses (eval.py's control row)")
    ap.add_argument("--sessions", type=int, default=0,
                    help="only the first N sessions, and the questions whose evidence is in them")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    conv = next(c for c in json.load(open(a.data)) if c["sample_id"] == a.sample)
    def kept(session):
        return a.sessions == 0 or session <= a.sessions
    turns = [(t["dia_id"], t["text"]) for k, v in conv["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) and kept(int(k.split("_")[1]))
             for t in v]
    questions = [(str(i), q["question"]) for i, q in enumerate(conv["qa"]) if q.get("evidence")
                 and all(kept(int(e.split(":")[0].lstrip("D") or 0)) for e in q["evidence"])]
    server = llm.start(llm.model_path("qwen1.5b", a.out), a.port, a.threads)
    for lang in a.langs.split(","):
        path = os.path.join(a.out, f"{a.sample}.{lang}.json")
        if a.back:
            there = json.load(open(path))
            path = os.path.join(a.out, f"{a.sample}.{lang}-en.json")
        done = json.load(open(path)) if os.path.exists(path) else {"turns": {}, "questions": {}}
        t0 = time.time()
        for part, items in (("questions", questions), ("turns", turns)):
            for key, text in items:
                if key in done[part]:
                    continue
                if a.back:
                    if key not in there[part]:
                        continue
                    text = there[part][key]
                done[part][key] = translate(a.port, text, lang, a.back)
                with open(path + ".tmp", "w") as f:
                    json.dump(done, f, ensure_ascii=False, indent=0)
                os.replace(path + ".tmp", path)
        print(f"{a.sample} {lang}: {len(done['turns'])} turns, {len(done['questions'])} questions, "
              f"{time.time() - t0:.0f} s", flush=True)
    del server


if __name__ == "__main__":
    main()
