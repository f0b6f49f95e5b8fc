# memory_ext — `make run` to try it, `make test` to check it. Both install what is missing.
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
RUN_PORT  ?= 55432
TEST_PORT ?= 55433
# Cluster data lives outside the checkout: the server runs as the postgres user, which may not
# be able to enter the directory a checkout is in (e.g. under /root).
RUN_PGDATA  ?= /var/tmp/memory_ext/run-$(RUN_PORT)
TEST_PGDATA ?= /var/tmp/memory_ext/test-$(TEST_PORT)
export PG_CONFIG RUN_PORT TEST_PORT RUN_PGDATA TEST_PGDATA


.PHONY: all deps build install run stop test bench eval test-core lint clean-run help

all: build

help:
	@echo "make deps     install Postgres 15, pgvector 0.8.0, cargo-pgrx 0.18.0 (skips what is there)"
	@echo "make build    cargo build"
	@echo "make install  build and install the extension into the system Postgres 15"
	@echo "make run      start a local server on 127.0.0.1:$(RUN_PORT) with the extension and a demo"
	@echo "make stop     stop that server"
	@echo "make test     every test layer (lint, core, pgrx, regress, client, backup, crash, fuzz, upgrade, worker, citus)"
	@echo "make bench    benchmarks on a release build; figures in bench/results/"
	@echo "make eval     retrieval quality on LoCoMo (DATA=file to score another file); bench/results/eval.md"
	@echo "make clean-run  stop the local server and delete its data"

deps:
	scripts/deps.sh all

build: deps
	cargo build

install: deps
	scripts/install.sh

run: install
	scripts/run.sh

stop:
	scripts/cluster.sh stop $(RUN_PGDATA)

clean-run:
	scripts/cluster.sh destroy $(RUN_PGDATA)

test: deps
	scripts/test.sh

bench: deps
	scripts/bench.sh

# DATA=path/to/locomo.json scores any LoCoMo-format file (default: the dev split).
eval: deps
	DATA=$(DATA) scripts/eval.sh

# Single layers, for a quicker loop.
lint:
	scripts/test.sh lint
test-core:
	cargo test -p memory_core
