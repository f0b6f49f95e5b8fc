#!/usr/bin/env python3
"""`make eval-qa`: LoCoMo answers measured end to end (docs/retrieval.md "Answers").

Each sampled question is answered by a language model (any OpenAI-compatible endpoint) with its
context built six ways on the same rows (the eval's structured turns shape, bench/src/eval) and
the same token budget (cl100k, count_tokens()):

  memory_context  what memory_ext gives an agent: memory_context('qa', 'qa', question, ...) of
                  an agent with empty persona and human blocks, its frame (blocks, metadata)
                  on top of the budget
  memory_context + summaries
                  the same with the summary of each speaker the question names (all speakers
                  when it names none) in the prompt, within the same budget: `about:<speaker>`,
                  a summary the worker keeps (docs/api.md "Summaries") scoped to what the
                  speaker said, written by the same model as the answers
  pgvector        the raw pgvector order: ORDER BY embedding <=> memory_embed(question)
  bm25            BM25 alone: memory_query with every other signal weighted 0
  last turns      the conversation's last turns that fit
  no memory       nothing
  oracle          the gold evidence turns themselves (the most any retrieval can give)

Retrieved turns are shown the same way in every condition: one line per turn, `(YYYY-MM-DD)
Speaker: text`, the session's date first (memory_query's bullets). Scoring is LoCoMo's own
(task_eval/evaluation.py of the benchmark's repository, ported below): token F1 over
Porter-stemmed, normalised tokens; a multi-hop answer (category 1) scored per comma-separated
part; an open-domain gold (category 3) cut at its first ';'; adversarial questions (category
5) scored 1 when the answer says the conversation does not mention it, reported apart. Beside
it the same F1 after normalising dates in answer and gold (`normalise_dates`).

Answers are cached by (model, question, condition, prompt) in --cache, so an interrupted run
resumes where it stopped and a run after a retrieval change asks only what changed.

    eval_qa.py --dsn DSN --data locomo-dev.json --llm-url http://127.0.0.1:PORT/v1
               --out bench/results [--per-category 40] [--adversarial 20] [--budget 400]
"""
import argparse
import hashlib
import json
import os
import random
import re
import string
import sys
import time
import urllib.request
from collections import Counter, defaultdict

import psycopg
from psycopg.types.json import Jsonb

CONDITIONS = ["memory_context", "memory_context + summaries", "pgvector", "bm25", "last turns",
              "no memory", "oracle"]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# memory_query with only BM25 (bench/src/eval/mod.rs NO_STRUCTURE, vector 0).
BM25_WEIGHTS = ('{"vector": 0, "hop1": 0, "hop2": 0, "thread": 0, "actor": 0, "entity": 0, '
                '"time": 0, "importance": 0, "pinned": 0, "recency": 0}')
# The built-in model's query instruction (bench/src/eval/mod.rs query_prefix): none for the
# default all-MiniLM-L6-v2.
QUERY_PREFIX = ""

# LoCoMo's answering prompts (task_eval/gpt_utils.py of the benchmark's repository).
QA_PROMPT = ("Based on the above context, write an answer in the form of a short phrase for the "
             "following question. Answer with exact words from the context whenever possible.\n\n"
             "Question: {} Short answer:")
QA_PROMPT_CAT_5 = ("Based on the above context, answer the following question. If the answer is "
                   "not mentioned in the conversation, reply exactly: Not mentioned in the "
                   "conversation.\n\nQuestion: {} Short answer:")
TEMPORAL_SUFFIX = " Use DATE of CONVERSATION to answer with an approximate date."
PREAMBLE = ("Below is what is remembered of a conversation between two people: {} and {}. "
            "Each line starts with the date it was said.\n\n")


# --- LoCoMo's scoring (task_eval/evaluation.py) ----------------------------------------------
_stem = None


def stem(w):
    global _stem
    if _stem is None:
        from nltk.stem import PorterStemmer
        _stem = PorterStemmer().stem
    return _stem(w)


def normalize_answer(s):
    s = str(s).replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the|and)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction, ground_truth):
    p = [stem(w) for w in normalize_answer(prediction).split()]
    g = [stem(w) for w in normalize_answer(ground_truth).split()]
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction, ground_truth):
    """Category 1: each gold part scored against its best predicted part, averaged."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in ground_truth.split(",")]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def score(category, prediction, answer):
    if category == 5:
        out = prediction.lower()
        return 1.0 if ("no information available" in out or "not mentioned" in out) else 0.0
    answer = str(answer)
    if category == 3:
        answer = answer.split(";")[0].strip()
    if category == 1:
        return f1_multi(prediction, answer)
    return f1_score(prediction, answer)


# --- Dates ----------------------------------------------------------------------------------
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
_MON = {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
_MONTH_RE = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"


def normalise_dates(s):
    """Every date written as `8 May 2023`, `May 8, 2023`, `8th of May 2023`, `2023-05-08`,
    `05/08/2023` (month first, as the US models write it) becomes `8 may 2023`; `2023-05` and
    `May, 2023` become `may 2023`. Both the answer and the gold go through it, so the F1 beside
    LoCoMo's counts a date the model copied in another format as the same date."""
    s = str(s)

    def dmy(d, m, y):
        return f"{int(d)} {MONTHS[m - 1]} {y}"

    s = re.sub(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b",
               lambda m: dmy(m[3], int(m[2]), m[1]) if 1 <= int(m[2]) <= 12 else m[0], s)
    s = re.sub(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b",
               lambda m: dmy(m[2], int(m[1]), m[3]) if 1 <= int(m[1]) <= 12 else m[0], s)
    s = re.sub(r"\b(\d{4})-(\d{1,2})\b",
               lambda m: f"{MONTHS[int(m[2]) - 1]} {m[1]}" if 1 <= int(m[2]) <= 12 else m[0], s)
    s = re.sub(r"\b" + _MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b",
               lambda m: dmy(m[2], _MON[m[1].lower()[:3]], m[3]), s, flags=re.I)
    s = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_RE + r",?\s+(\d{4})\b",
               lambda m: dmy(m[1], _MON[m[2].lower()[:3]], m[3]), s, flags=re.I)
    s = re.sub(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b",
               lambda m: f"{MONTHS[_MON[m[1].lower()[:3]] - 1]} {m[2]}", s, flags=re.I)
    return s


# --- Data -----------------------------------------------------------------------------------
def session_day(s):
    """'1:56 pm on 8 May, 2023' -> '2023-05-08'."""
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", s or "")
    if not m:
        return None
    return f"{m[3]}-{_MON[m[2].lower()[:3]]:02d}-{int(m[1]):02d}"


def session_time(s):
    m = re.match(r"\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+", s or "", re.I)
    day = session_day(s)
    if not day:
        return None
    h, mi = (int(m[1]) % 12 + (12 if m[3].lower() == "pm" else 0), int(m[2])) if m else (0, 0)
    return f"{day}T{h:02d}:{mi:02d}:00Z"


def turns(conv):
    """Every turn in order: (dia_id, session n, day, time, speaker, stored text)."""
    c = conv["conversation"]
    out = []
    for n in sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k)):
        when = c.get(f"session_{n}_date_time", "")
        for t in c[f"session_{n}"]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [image: {t['blip_caption']}]"
            out.append((t["dia_id"], n, session_day(when), session_time(when), t["speaker"], text))
    return out


def sample(data, per_category, adversarial, seed):
    """A stratified sample: `per_category` questions of each of categories 1-4 (all of a
    category when it has fewer) and `adversarial` of category 5, drawn with a fixed seed over
    every conversation; only questions with evidence."""
    rnd = random.Random(seed)
    by = defaultdict(list)
    for conv in data:
        for i, q in enumerate(conv["qa"]):
            if q.get("evidence"):
                by[q["category"]].append((conv["sample_id"], i))
    picked = []
    for cat in sorted(by):
        n = adversarial if cat == 5 else per_category
        picked += rnd.sample(by[cat], min(n, len(by[cat])))
    return sorted(picked, key=lambda x: (x[0], x[1]))


# --- The database ---------------------------------------------------------------------------
def tenant(sample_id):
    return f"qa:{sample_id}"


def load(db, conv):
    """The conversation as the eval's structured turns (thread per session, speaker as actor,
    the session's time as event time, the dialogue id in metadata); skipped when loaded."""
    t = tenant(conv["sample_id"])
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (t,))
    have = db.execute("SELECT count(*) FROM memory.items WHERE user_id = %s", (t,)).fetchone()[0]
    rows = turns(conv)
    # memory_context is an agent's: one with empty persona and human blocks.
    db.execute("SELECT memory_agent('qa', %s)", (t,))
    if have >= len(rows):
        return
    reqs = []
    for dia, n, day, ts, speaker, text in rows:
        r = {"text": text, "kind": "archival", "thread_id": f"{conv['sample_id']}:session_{n}",
             "actor_id": speaker, "role": "user", "metadata": {"dia_ids": [dia]}}
        if ts:
            r["happened_at"] = ts
        reqs.append(r)
    for i in range(0, len(reqs), 100):
        db.execute("SELECT memory_write_batch(%s)", (Jsonb(reqs[i:i + 100]),))


SUMMARY_QUESTION = ("What do we know about {}: their life, work, family, interests, plans and "
                    "what has happened to them, with when?")


def summaries(db, conv, llm_url, llm_model, fresh=False):
    """`about:<speaker>` for each speaker (docs/api.md "Summaries"), defined and written once by
    the answering model (memory_summary_refresh, as the worker would); kept in the database
    between runs. Returns the seconds spent writing them."""
    t = tenant(conv["sample_id"])
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (t,))
    c = conv["conversation"]
    began = time.time()
    for speaker in (c["speaker_a"], c["speaker_b"]):
        name = f"about:{speaker}"
        db.execute("SELECT memory_summary_define(%s, %s, %s)",
                   (name, SUMMARY_QUESTION.format(speaker), Jsonb({"actor": speaker, "limit": 40})))
        s = db.execute("SELECT memory_summary_get(%s)", (name,)).fetchone()[0]
        if s["version"] >= 1 and s["method"] == "llm" and not fresh:
            continue
        db.execute("SELECT set_config('memory_ext.llm_url', %s, false), "
                   "set_config('memory_ext.llm_model', %s, false), "
                   "set_config('memory_ext.http_timeout_ms', '120000', false)", (llm_url, llm_model))
        r = db.execute("SELECT memory_summary_refresh(%s)", (name,)).fetchone()[0]
        db.execute("RESET memory_ext.llm_url; RESET memory_ext.llm_model; RESET memory_ext.http_timeout_ms")
        s = db.execute("SELECT memory_summary_get(%s)", (name,)).fetchone()[0]
        print(f"summary {t} {name}: {s['method']}, {len(s['evidence'])} memories, "
              f"{len((s['answer'] or '').split())} words {r}", flush=True)
    return time.time() - began


def named_speakers(conv, question):
    """The speakers a question names (by first name), or both when it names neither."""
    c = conv["conversation"]
    both = [c["speaker_a"], c["speaker_b"]]
    named = [s for s in both if re.search(r"\b" + re.escape(s.split()[0]) + r"\b", question, re.I)]
    return named or both


def tokens(db, text):
    return db.execute("SELECT count_tokens(%s)", (text,)).fetchone()[0]


def fit(db, lines, budget):
    """As many lines as fit in `budget` tokens, in order."""
    out, used = [], 0
    for line in lines:
        n = tokens(db, line + "\n")
        if used + n > budget:
            continue
        out.append(line)
        used += n
    return out


def line(day, text):
    return f"({day}) {text}" if day else text


def contexts(db, conv, q, budget, by_dia):
    """The six contexts of one question."""
    t = tenant(conv["sample_id"])
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (t,))
    db.execute("RESET memory_ext.rank_weights")
    question = q["question"]
    out = {}
    # The agent's section around the memories (its blocks, empty here, and the metadata lines)
    # is added to the budget, so that the recalled memories have `budget` tokens as every other
    # context does; prompt tokens show what the section costs.
    frame = db.execute("SELECT count_tokens(memory_context('qa', 'qa', %s, 100000, memories => 0, "
                       "files => 0))", (question,)).fetchone()[0]
    out["memory_context"] = db.execute(
        "SELECT memory_context('qa', 'qa', %s, %s, memories => 100, files => 0)",
        (question, budget + frame)).fetchone()[0] or ""
    names = [f"about:{s}" for s in named_speakers(conv, question)]
    out["memory_context + summaries"] = db.execute(
        "SELECT memory_context('qa', 'qa', %s, %s, memories => 100, files => 0, summaries => %s)",
        (question, budget + frame, names)).fetchone()[0] or ""
    vec = db.execute(
        "SELECT i.metadata->'dia_ids'->>0 FROM memory.items i, (SELECT memory_embed(%s) AS v) q "
        "WHERE i.user_id = %s AND i.state = 'active' AND i.embedding IS NOT NULL "
        "ORDER BY i.embedding <=> q.v LIMIT 100", (QUERY_PREFIX + question, t)).fetchall()
    out["pgvector"] = "\n".join(fit(db, [line(by_dia[d][2], by_dia[d][5]) for (d,) in vec
                                         if d in by_dia], budget))
    db.execute(f"SET memory_ext.rank_weights = '{BM25_WEIGHTS}'")
    r = db.execute("SELECT memory_query(%s)", (Jsonb({"query": question, "top_k": 100,
                                                        "budget_tokens": budget}),)).fetchone()[0]
    db.execute("RESET memory_ext.rank_weights")
    out["bm25"] = "\n".join(i["text"] for i in r.get("items", []))
    rows = turns(conv)
    last, used = [], 0
    for r in reversed(rows):
        ln = line(r[2], r[5])
        n = tokens(db, ln + "\n")
        if used + n > budget:
            break
        last.append(ln)
        used += n
    out["last turns"] = "\n".join(reversed(last))
    out["no memory"] = ""
    ev = [by_dia[e] for e in evidence(q) if e in by_dia]
    out["oracle"] = "\n".join(fit(db, [line(r[2], r[5]) for r in ev], budget))
    return out


def evidence(q):
    """Evidence ids (the data's traps: several in one string, `D8:6; D9:17`)."""
    out = []
    for e in q.get("evidence") or []:
        out += [x for x in re.split(r"[;,\s]+", e) if re.fullmatch(r"D\d+:\d+", x)]
    return out


def reached(ctx, q, by_dia):
    """Does a gold evidence turn reach the prompt (its text, or its first 80 characters when a
    line was shortened)?"""
    for e in evidence(q):
        if e in by_dia:
            text = by_dia[e][5]
            if text in ctx or text[:80] in ctx:
                return True
    return False


# --- The model ------------------------------------------------------------------------------
def ask(url, model, prompt, timeout=600):
    body = {"model": model, "temperature": 0, "max_tokens": 32,
            "messages": [{"role": "user", "content": prompt}]}
    req = urllib.request.Request(url.rstrip("/") + "/chat/completions",
                                 data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    t0 = time.time()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        a = json.load(r)
    text = a["choices"][0]["message"]["content"] or ""
    return text.strip().split("\n")[0], a.get("usage", {}).get("prompt_tokens"), time.time() - t0


def prompt_for(conv, q, ctx):
    c = conv["conversation"]
    head = PREAMBLE.format(c["speaker_a"], c["speaker_b"])
    body = (ctx + "\n\n") if ctx else "(nothing is remembered)\n\n"
    if q["category"] == 5:
        return head + body + QA_PROMPT_CAT_5.format(q["question"])
    p = QA_PROMPT.format(q["question"])
    if q["category"] == 2:
        p += TEMPORAL_SUFFIX
    return head + body + p


# --- Statistics -----------------------------------------------------------------------------
def bootstrap(a, b, n=2000, seed=7):
    """Paired bootstrap of mean(a) - mean(b): the difference and its 95% interval."""
    rnd = random.Random(seed)
    k = len(a)
    diffs = []
    for _ in range(n):
        idx = [rnd.randrange(k) for _ in range(k)]
        diffs.append(sum(a[i] - b[i] for i in idx) / k)
    diffs.sort()
    return sum(x - y for x, y in zip(a, b)) / k, diffs[int(0.025 * n)], diffs[int(0.975 * n) - 1]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def common_args(ap):
    """The database, data, model and output arguments eval_qa.py and eval_extract.py share."""
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--llm-url", required=True)
    ap.add_argument("--llm-model", default="local")
    ap.add_argument("--model-name", default="qwen2.5-coder-1.5b-instruct q4_k_m")
    ap.add_argument("--out", required=True)


def main():
    ap = argparse.ArgumentParser()
    common_args(ap)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--per-category", type=int, default=40)
    ap.add_argument("--adversarial", type=int, default=20)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--limit", type=int, default=0, help="stop after this many questions")
    ap.add_argument("--fresh-summaries", action="store_true",
                    help="write the speakers' summaries again (after a change to how they are written)")
    a = ap.parse_args()

    data = json.load(open(a.data))
    convs = {c["sample_id"]: c for c in data}
    picked = sample(data, a.per_category, a.adversarial, a.seed)
    if a.limit:
        picked = picked[:a.limit]
    os.makedirs(a.cache, exist_ok=True)
    cache_file = os.path.join(a.cache, "answers.jsonl")
    cache = {}
    if os.path.exists(cache_file):
        for ln in open(cache_file):
            try:
                r = json.loads(ln)
                cache[r["key"]] = r
            except ValueError:
                pass
    db = psycopg.connect(a.dsn, autocommit=True)
    t_load = time.time()
    for sid in sorted({s for s, _ in picked}):
        load(db, convs[sid])
    print(f"loaded {len({s for s, _ in picked})} conversations in {time.time() - t_load:.0f} s",
          flush=True)
    summary_s = sum(summaries(db, convs[sid], a.llm_url, a.llm_model, a.fresh_summaries)
                    for sid in sorted({s for s, _ in picked}))
    print(f"summaries written in {summary_s:.0f} s", flush=True)
    results = []  # one dict per question
    began = time.time()
    with open(cache_file, "a") as cf:
        for n, (sid, i) in enumerate(picked, 1):
            conv = convs[sid]
            q = conv["qa"][i]
            by_dia = {r[0]: r for r in turns(conv)}
            ctxs = contexts(db, conv, q, a.budget, by_dia)
            row = {"sample": sid, "index": i, "category": q["category"], "by": {}}
            gold = q.get("answer", q.get("adversarial_answer", ""))
            for cond in CONDITIONS:
                p = prompt_for(conv, q, ctxs[cond])
                key = hashlib.sha256(json.dumps([a.model_name, sid, i, cond, p]).encode()).hexdigest()
                if key not in cache:
                    ans, ptok, secs = ask(a.llm_url, a.llm_model, p)
                    cache[key] = {"key": key, "answer": ans, "prompt_tokens": ptok, "seconds": secs}
                    cf.write(json.dumps(cache[key]) + "\n")
                    cf.flush()
                c = cache[key]
                row["by"][cond] = {
                    "answer": c["answer"],
                    "f1": score(q["category"], c["answer"], gold),
                    "f1_dates": score(q["category"], normalise_dates(c["answer"]),
                                      normalise_dates(gold)),
                    "reached": reached(ctxs[cond], q, by_dia),
                    "prompt_tokens": c["prompt_tokens"],
                    "seconds": c["seconds"],
                }
            results.append(row)
            mc = row["by"]["memory_context"]
            print(f"[{n}/{len(picked)}] {sid}#{i} cat {q['category']} gold={str(gold)[:40]!r} "
                  f"mc={mc['answer'][:40]!r} f1={mc['f1']:.2f} oracle={row['by']['oracle']['f1']:.2f} "
                  f"({time.time() - began:.0f} s)", flush=True)
    report(a, results, time.time() - began)


def report(a, results, seconds):
    main_rows = [r for r in results if r["category"] != 5]
    adv = [r for r in results if r["category"] == 5]
    lines = [f"# LoCoMo answers end to end ({a.model_name}; budget {a.budget} tokens)", "",
             f"{len(main_rows)} questions of categories 1-4 (stratified, seed {a.seed}) and "
             f"{len(adv)} adversarial ones, from {os.path.basename(a.data)}; "
             f"{seconds / 60:.0f} min for the model calls of this run (cached answers are free).",
             "", "| context | F1 | F1, dates normalised | of oracle | evidence in context | "
             "prompt tokens | s / question |", "|---|---|---|---|---|---|---|"]
    oracle = mean([r["by"]["oracle"]["f1"] for r in main_rows])
    summary = {}
    for cond in CONDITIONS:
        f = [r["by"][cond]["f1"] for r in main_rows]
        fd = [r["by"][cond]["f1_dates"] for r in main_rows]
        ev = [r["by"][cond]["reached"] for r in main_rows]
        pt = [r["by"][cond]["prompt_tokens"] or 0 for r in main_rows]
        sec = [r["by"][cond]["seconds"] for r in main_rows]
        summary[cond] = {"f1": mean(f), "f1_dates": mean(fd), "of_oracle": mean(f) / oracle if oracle else None,
                         "evidence_in_context": mean(ev), "prompt_tokens": mean(pt), "seconds": mean(sec)}
        s = summary[cond]
        lines.append(f"| {cond} | {s['f1']:.3f} | {s['f1_dates']:.3f} | "
                     f"{(s['of_oracle'] or 0):.2f} | {sum(ev)}/{len(ev)} | {s['prompt_tokens']:.0f} | "
                     f"{s['seconds']:.1f} |")
    lines += ["", "By category (F1; evidence in context):", "",
              "| context | " + " | ".join(CATEGORIES[c] for c in (1, 2, 3, 4)) + " |",
              "|---" * 5 + "|"]
    for cond in CONDITIONS:
        cells = []
        for c in (1, 2, 3, 4):
            rs = [r for r in main_rows if r["category"] == c]
            cells.append(f"{mean([r['by'][cond]['f1'] for r in rs]):.3f}; "
                         f"{sum(r['by'][cond]['reached'] for r in rs)}/{len(rs)}")
        lines.append(f"| {cond} | " + " | ".join(cells) + " |")
    lines += ["", "memory_context against each other context (paired bootstrap, 2,000 resamples, "
              "95% interval of the F1 difference):", "", "| against | difference | interval |",
              "|---|---|---|"]
    mc = [r["by"]["memory_context"]["f1"] for r in main_rows]
    for cond in CONDITIONS[1:]:
        d, lo, hi = bootstrap(mc, [r["by"][cond]["f1"] for r in main_rows])
        lines.append(f"| {cond} | {d:+.3f} | [{lo:+.3f}, {hi:+.3f}] |")
    if adv:
        lines += ["", f"Adversarial questions ({len(adv)}; 1 when the answer says the "
                  "conversation does not mention it):", "", "| context | score |", "|---|---|"]
        for cond in CONDITIONS:
            lines.append(f"| {cond} | {mean([r['by'][cond]['f1'] for r in adv]):.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "eval-qa.md"), "w").write(text)
    json.dump({"model": a.model_name, "budget": a.budget, "seed": a.seed, "summary": summary,
               # Scores only: the answers quote the conversations, which stay out of the repository.
               "questions": [{"sample": r["sample"], "index": r["index"], "category": r["category"],
                              "by": {c: {k: v for k, v in b.items() if k != "answer"}
                                     for c, b in r["by"].items()}} for r in results]},
              open(os.path.join(a.out, "eval-qa.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
