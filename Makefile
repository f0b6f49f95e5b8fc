# memory_ext — `make run` to try it, `make test` to check it. Both install what is missing.
# PG=17 (or 18) picks the PostgreSQL major version for every target (default 15: Debian 12's own
# packages, so a first run builds nothing but memory_ext); ports and data directories are per
# version (scripts/lib.sh), so servers of different versions run side by side.
PG ?= 15
export PG
# scripts/lib.sh is bash.
SHELL := /bin/bash

.PHONY: all deps deps-run build install run stop test bench eval eval-qa eval-extract eval-languages package test-core lint clean-run help

all: build

help:
	@echo "make deps     install what running and testing need: PostgreSQL $(PG), pgvector, cargo-pgrx 0.18.0, models, test tools (skips what is there)"
	@echo "make deps-run only what running needs (make run, make install)"
	@echo "make build    cargo build"
	@echo "make install  build and install the extension into PostgreSQL $(PG)"
	@echo "make run      start a local PostgreSQL $(PG) server on 127.0.0.1 with the extension and a demo"
	@echo "make stop     stop that server"
	@echo "make test     every test layer (lint, core, pgrx, regress, client, backup, crash, fuzz, upgrade, worker, model, package, citus, clients, inspect)"
	@echo "make package  Debian packages for PostgreSQL $(PG) into target/debian/"
	@echo "make bench    benchmarks on a release build; figures in bench/results/"
	@echo "make eval     retrieval quality on LoCoMo (DATA=file to score another file); bench/results/eval.md"
	@echo "make eval-qa  LoCoMo answered by a model with seven contexts (LLM_URL=endpoint, default a local Qwen 1.5B); bench/results/eval-qa.md"
	@echo "make eval-extract  the worker's extraction with that model against LoCoMo's observations; bench/results/eval-extract.md"
	@echo "make eval-languages  the same in German, Japanese, Chinese, Spanish (translated turns); bench/results/eval-languages.md"
	@echo "make clean-run  stop the local server and delete its data"

# What running needs (deps-run) and what the tests add (deps): `make run` installs only the former.
deps:
	scripts/deps.sh all

deps-run:
	scripts/deps.sh run

build: deps-run
	. scripts/lib.sh && cargo build --no-default-features --features pg$(PG)

install: deps-run
	scripts/install.sh

run: install
	scripts/run.sh

stop:
	. scripts/lib.sh && scripts/cluster.sh stop "$$RUN_PGDATA"

clean-run:
	. scripts/lib.sh && scripts/cluster.sh destroy "$$RUN_PGDATA"

# LAYERS="pgrx regress" runs those layers only (scripts/test.sh lists them); with
# LAYERS=regress, FILE=entities (or FILE="entities store") runs those golden files only.
test: deps
	FILE="$(FILE)" scripts/test.sh $(LAYERS)

bench: deps
	scripts/bench.sh

# Debian packages for PostgreSQL $(PG) into target/debian/pg$(PG) (docs/operations.md).
package: deps
	scripts/package.sh

# DATA=path/to/locomo.json scores any LoCoMo-format file (default: the dev split).
eval: deps
	DATA=$(DATA) scripts/eval.sh

# LoCoMo answered end to end by a model, seven contexts side by side (docs/retrieval.md "Answers");
# LLM_URL=http://host:port/v1 for any OpenAI-compatible endpoint (default: a local Qwen 1.5B).
eval-qa: deps
	DATA=$(DATA) LLM_URL=$(LLM_URL) scripts/eval_qa.sh

# The worker's extraction with the same model, against LoCoMo's observations (docs/retrieval.md
# "Extraction with a real model").
eval-extract: deps
	DATA=$(DATA) LLM_URL=$(LLM_URL) scripts/eval_qa.sh extract

# Retrieval in other languages (docs/retrieval.md "Languages"); LANGS=de,ja,zh,es.
eval-languages: deps
	DATA=$(DATA) EVAL_LANGUAGES=$(or $(LANGS),de,ja,zh,es) scripts/eval.sh

# Single layers, for a quicker loop.
lint:
	scripts/test.sh lint
test-core:
	. scripts/lib.sh && cargo test -p memory_core
