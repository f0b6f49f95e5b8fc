#!/usr/bin/env python3
"""`make eval-extract`: extraction measured with a real model (docs/retrieval.md "Extraction
with a real model").

The first --sessions sessions of the first --conversations conversations of the LoCoMo dev
split go in as messages (a thread per session, each turn a `user` message named for its
speaker, at the session's time), and memory_extract reads each thread with the model behind
--llm-url, as the worker does. Then, against LoCoMo's own observations of those sessions (the
facts the benchmark's authors wrote down, each with the turns it came from):

  coverage   the share of observations with an extracted fact of the same session at cosine >=
             t (the built-in model's vectors), at t = 0.5, 0.6, 0.7 (0.6 the headline: see
             docs/retrieval.md for the pairs read at each)
  answers    malformed answers, facts dropped by the checks, supersedes, consent proposals,
             tokens and seconds per turn, from memory_extract's own counts
  retrieval  the facts shape of `make eval` on these sessions: for each question whose evidence
             lies in them, is an evidence turn among the turns of the top-k memory_query
             results (a fact's turn is its `metadata.seq`; an observation's, its dia_ids) —
             the model's facts beside the gold observations on the same questions
  precision  a sample of extracted facts with the turns they came from, written to --review
             for a person to judge (the verdicts are reported in docs/retrieval.md)
  dropped    every entry the checks left out, with why (a proxy between memory_ext and
             --llm-url records the model's answers, and crates/memory_core/examples/
             extract_check.rs, --check-bin, reads them through the same checks): the count by
             reason in the results, the entries in --review's .dropped

    eval_extract.py --dsn DSN --data locomo-dev.json --llm-url URL --out bench/results
                    [--conversations 2] [--sessions 5] [--review FILE]
"""
import argparse
import http.server
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import psycopg
from psycopg.types.json import Jsonb

sys.path.insert(0, os.path.dirname(__file__))
from eval_qa import common_args, evidence, session_time  # noqa: E402

THRESHOLDS = (0.5, 0.6, 0.7)


def sessions(conv, limit):
    c = conv["conversation"]
    ns = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
    return ns[:limit]


def load_turns(db, conv, ns):
    """Each session as a thread of messages; skipped when loaded. Returns {thread: [dia_id by seq]}."""
    sid = conv["sample_id"]
    c = conv["conversation"]
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (f"xq:{sid}",))
    out = {}
    for n in ns:
        thread = f"{sid}:session_{n}"
        turns = c[f"session_{n}"]
        out[thread] = [t["dia_id"] for t in turns]
        have = db.execute("SELECT count(*) FROM memory.messages WHERE thread_id = %s", (thread,)).fetchone()[0]
        if have >= len(turns):
            continue
        when = session_time(c.get(f"session_{n}_date_time", ""))
        for t in turns[have:]:
            text = t["text"] + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
            db.execute("SELECT message_append(%s, 'user', %s, name => %s, created_at => %s)",
                       (thread, text, t["speaker"], when))
    return out


def load_observations(db, conv, ns):
    """The gold observations of the sessions as memories (the `facts` shape, bench/src/eval/load.rs)."""
    sid = conv["sample_id"]
    t = f"xg:{sid}"
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (t,))
    obs = []
    for n in ns:
        thread = f"{sid}:session_{n}"
        when = session_time(conv["conversation"].get(f"session_{n}_date_time", ""))
        for person, lst in conv["observation"].get(f"session_{n}_observation", {}).items():
            for text, dias in lst:
                ids = evidence({"evidence": [dias] if isinstance(dias, str) else dias})
                obs.append({"text": text.strip(), "thread": thread, "person": person, "dias": ids})
    have = db.execute("SELECT count(*) FROM memory.items WHERE user_id = %s", (t,)).fetchone()[0]
    if have < len(obs):
        reqs = [{"text": o["text"], "kind": "semantic", "thread_id": o["thread"], "actor_id": o["person"],
                 "metadata": {"dia_ids": o["dias"]}} for o in obs[have:]]
        for i in range(0, len(reqs), 100):
            db.execute("SELECT memory_write_batch(%s)", (Jsonb(reqs[i:i + 100]),))
    return obs


def extract(db, conv, threads, llm_url, llm_model, batch):
    """memory_extract on every thread not read to its end, with the model; the answers' counts."""
    sid = conv["sample_id"]
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (f"xq:{sid}",))
    db.execute("SELECT set_config('memory_ext.llm_url', %s, false), set_config('memory_ext.llm_model', %s, false), "
               "set_config('memory_ext.http_timeout_ms', '120000', false), "
               "set_config('memory_ext.extract_batch', %s, false), "
               "set_config('memory_ext.extract_daily_cap', '100000', false)", (llm_url, llm_model, str(batch)))
    runs = []
    for thread in threads:
        done = db.execute("SELECT coalesce((SELECT extracted_seq FROM memory.extractions WHERE thread_id = %s), 0)",
                          (thread,)).fetchone()[0]
        if done >= len(threads[thread]):
            continue
        t0 = time.time()
        r = db.execute("SELECT memory_extract(%s)", (thread,)).fetchone()[0]
        r["seconds"] = time.time() - t0
        r["thread"] = thread
        runs.append(r)
        print(f"extracted {thread}: {r.get('turns')} turns, {r.get('created')} created, "
              f"{r.get('rejected')} rejected, {r.get('failed')} failed, {r['seconds']:.0f} s", flush=True)
    db.execute("RESET memory_ext.llm_url; RESET memory_ext.llm_model; RESET memory_ext.http_timeout_ms; "
               "RESET memory_ext.extract_batch; RESET memory_ext.extract_daily_cap")
    return runs


class Recorder:
    """A proxy in front of the model's server that keeps every (prompt, answer) memory_ext's
    extraction exchanges with it, to read what the checks dropped (memory_extract counts them
    but keeps no text of them)."""

    def __init__(self, upstream):
        self.exchanges = []
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                req = urllib.request.Request(upstream.rstrip("/") + self.path.removeprefix("/v1"), data=body,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=600) as r:
                        status, answer = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, answer = e.code, e.read()
                try:
                    prompt = json.loads(body)["messages"][-1]["content"]
                    text = json.loads(answer)["choices"][0]["message"]["content"]
                    rec.exchanges.append((prompt, text))
                except (ValueError, KeyError, IndexError, TypeError):
                    pass
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def save(self, path):
        """The extraction calls (their input is the batch as JSON with its turns), one JSON
        object a line, as extract_check reads them."""
        with open(path, "w") as f:
            for prompt, answer in self.exchanges:
                try:
                    if "turns" not in json.loads(prompt):
                        continue
                except ValueError:
                    continue
                f.write(json.dumps({"input": prompt, "answer": answer}) + "\n")


def facts(db, conv, threads):
    sid = conv["sample_id"]
    t = f"xq:{sid}"
    rows = db.execute("SELECT id::text, text, thread_id, state, (metadata->>'seq')::int, category "
                      "FROM memory.items WHERE user_id = %s AND metadata->>'source' = 'extraction' "
                      "ORDER BY created_at", (t,)).fetchall()
    out = []
    for mid, text, thread, state, seq, cat in rows:
        dias = threads.get(thread, [])
        dia = dias[seq - 1] if seq and 0 < seq <= len(dias) else None
        out.append({"id": mid, "text": text, "thread": thread, "state": state, "dia": dia, "category": cat})
    return out


def coverage(db, sid, obs):
    """Per observation: the best cosine with an extracted fact of its session."""
    best = []
    for o in obs:
        v = db.execute(
            "SELECT max(1 - (i.embedding <=> q.v)) FROM memory.items i, (SELECT memory_embed(%s) AS v) q "
            "WHERE i.user_id = %s AND i.thread_id = %s AND i.metadata->>'source' = 'extraction' "
            "AND i.embedding IS NOT NULL", (o["text"], f"xq:{sid}", o["thread"])).fetchone()[0]
        best.append(v or 0.0)
    return best


def retrieval(db, conv, threads, fact_dias, k_list=(5, 10)):
    """The facts shape on the extracted sessions: does an evidence turn come up in the top k?"""
    sid = conv["sample_id"]
    dias_in = {d for ds in threads.values() for d in ds}
    qs = [q for q in conv["qa"] if q["category"] in (1, 2, 3, 4) and evidence(q)
          and all(e in dias_in for e in evidence(q))]
    out = {"questions": len(qs)}
    for label, tenant, dias_of in (("model facts", f"xq:{sid}", fact_dias),
                                   ("observations", f"xg:{sid}", None)):
        db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (tenant,))
        hits = {k: 0 for k in k_list}
        for q in qs:
            r = db.execute("SELECT memory_query(%s)", (Jsonb({"query": q["question"], "top_k": max(k_list),
                                                              "explain": False}),)).fetchone()[0]
            got = []
            for it in r.get("items", []):
                if dias_of is not None:
                    got.append({dias_of[it["id"]]} if it["id"] in dias_of else set())
                else:
                    m = db.execute("SELECT metadata->'dia_ids' FROM memory.items WHERE id = %s::uuid",
                                   (it["id"],)).fetchone()
                    got.append(set(m[0] or []) if m else set())
            ev = set(evidence(q))
            for k in k_list:
                if any(g & ev for g in got[:k]):
                    hits[k] += 1
        out[label] = hits
    return out


def main():
    ap = argparse.ArgumentParser()
    common_args(ap)
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=5)
    ap.add_argument("--review", default="")
    ap.add_argument("--check-bin", default="", help="crates/memory_core/examples/extract_check, built")
    # Turns per model call: the 1.5B reads ~33 tokens/s and writes ~18 here, and a call must
    # end within memory_ext.http_timeout_ms's 120 s ceiling with room for a long answer.
    ap.add_argument("--batch", type=int, default=8)
    a = ap.parse_args()

    data = json.load(open(a.data))[:a.conversations]
    db = psycopg.connect(a.dsn, autocommit=True)
    recorder = Recorder(a.llm_url) if a.review else None
    llm_url = recorder.url if recorder else a.llm_url
    all_runs, all_facts, best, obs_n, retr = [], [], [], 0, []
    turns_n = 0
    began = time.time()
    for conv in data:
        ns = sessions(conv, a.sessions)
        threads = load_turns(db, conv, ns)
        turns_n += sum(len(v) for v in threads.values())
        obs = load_observations(db, conv, ns)
        obs_n += len(obs)
        all_runs += extract(db, conv, threads, llm_url, a.llm_model, a.batch)
        fs = facts(db, conv, threads)
        all_facts += [dict(f, sample=conv["sample_id"]) for f in fs]
        best += coverage(db, conv["sample_id"], obs)
        retr.append(retrieval(db, conv, threads, {f["id"]: f["dia"] for f in fs if f["dia"]}))
    seconds = sum(r["seconds"] for r in all_runs)
    tot = lambda k: sum(int(r.get(k) or 0) for r in all_runs)  # noqa: E731
    proposals = sum(db.execute("SELECT count(*) FROM memory.proposals WHERE user_id = %s",
                               (f"xq:{c['sample_id']}",)).fetchone()[0] for c in data)
    active = [f for f in all_facts if f["state"] == "active"]
    lines = [f"# Extraction with a real model ({a.model_name})", "",
             f"LoCoMo dev: sessions 1-{a.sessions} of {len(data)} conversations "
             f"({', '.join(c['sample_id'] for c in data)}): {turns_n} turns, {obs_n} gold observations; "
             f"{len(all_facts)} facts extracted ({len(active)} active).", "",
             "| measure | value |", "|---|---|"]
    for t in THRESHOLDS:
        n = sum(1 for b in best if b >= t)
        lines.append(f"| coverage: observations with a fact at cosine >= {t} | {n}/{obs_n} ({n / max(obs_n, 1):.2f}) |")
    lines += [
        f"| facts per turn | {len(all_facts) / max(turns_n, 1):.2f} (observations per turn: {obs_n / max(turns_n, 1):.2f}) |",
        f"| model calls | {tot('llm_calls')} |",
        f"| malformed answers (failed) | {tot('failed')} |",
        f"| facts the checks dropped (rejected) | {tot('rejected')} |",
        f"| supersedes | {tot('superseded')} |",
        f"| consent proposals | {proposals} |",
        f"| tokens in / out per turn | {tot('tokens_in') / max(turns_n, 1):.0f} / {tot('tokens_out') / max(turns_n, 1):.0f} |",
        f"| seconds per turn (this run's calls) | {seconds / max(sum(int(r.get('turns') or 0) for r in all_runs), 1):.1f} |",
    ]
    dropped_by = {}
    if recorder and a.check_bin:
        recorder.save(a.review + ".answers")
        out = subprocess.run([a.check_bin, a.review + ".answers"], capture_output=True, text=True, check=True).stdout
        rows = [json.loads(x) for x in out.splitlines() if x.strip()]
        dropped_by = rows[-1]["dropped"]
        with open(a.review + ".dropped", "w") as f:
            for r in rows[:-1]:
                f.write(f"DROPPED ({r['reason']}, call {r['call']}): {r['text']}\n")
        lines.append("| the checks' drops by reason | " +
                     (", ".join(f"{k} {v}" for k, v in sorted(dropped_by.items())) or "none") + " |")
    q = sum(r["questions"] for r in retr)
    lines += ["", f"Retrieval on these sessions ({q} questions of categories 1-4 whose evidence lies in them; "
              "memory_query, default ranking): an evidence turn among the top k.", "",
              "| memories | recall@5 | recall@10 |", "|---|---|---|"]
    for label in ("model facts", "observations"):
        h5 = sum(r[label][5] for r in retr)
        h10 = sum(r[label][10] for r in retr)
        lines.append(f"| {label} | {h5}/{q} ({h5 / max(q, 1):.2f}) | {h10}/{q} ({h10 / max(q, 1):.2f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "eval-extract.md"), "w").write(text)
    json.dump({"model": a.model_name, "sessions": a.sessions, "conversations": [c["sample_id"] for c in data],
               "coverage": {str(t): sum(1 for b in best if b >= t) for t in THRESHOLDS},
               "observations": obs_n, "turns": turns_n, "facts": len(all_facts),
               "runs": [{k: v for k, v in r.items() if k != "error"} for r in all_runs],
               "retrieval": retr, "dropped_by_reason": dropped_by, "wall_seconds": time.time() - began},
              open(os.path.join(a.out, "eval-extract.json"), "w"), indent=1)
    if a.review:
        # For a person to judge (never committed: it quotes the conversations).
        rnd = random.Random(51)
        by = {c["sample_id"]: {t["dia_id"]: f"{t['speaker']}: {t['text']}"
                               for n in sessions(c, a.sessions) for t in c["conversation"][f"session_{n}"]}
              for c in data}
        with open(a.review, "w") as f:
            for x in rnd.sample(all_facts, min(30, len(all_facts))):
                f.write(f"FACT [{x['state']}, {x['category']}]: {x['text']}\n  TURN {x['dia']}: "
                        f"{by[x['sample']].get(x['dia'], '?')}\n\n")
        # Pairs near the headline threshold, to judge what a match at 0.6 means.
        with open(a.review + ".pairs", "w") as f:
            for conv in data:
                sid = conv["sample_id"]
                for o in load_observations(db, conv, sessions(conv, a.sessions)):
                    r = db.execute(
                        "SELECT i.text, 1 - (i.embedding <=> q.v) FROM memory.items i, (SELECT memory_embed(%s) AS v) q "
                        "WHERE i.user_id = %s AND i.thread_id = %s AND i.metadata->>'source' = 'extraction' "
                        "AND i.embedding IS NOT NULL ORDER BY i.embedding <=> q.v LIMIT 1",
                        (o["text"], f"xq:{sid}", o["thread"])).fetchone()
                    if r and 0.5 <= r[1] < 0.7:
                        f.write(f"{r[1]:.2f}\n  OBS:  {o['text']}\n  FACT: {r[0]}\n\n")


if __name__ == "__main__":
    main()
