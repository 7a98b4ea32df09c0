# The two commands of the README:  `make demo`  (the main job)  and  `make test`  (everything CI runs).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PG_BIN ?= /usr/lib/postgresql/15/bin

.PHONY: demo test lint typecheck pytest bench postgres-binaries

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/dynavec-langgraph demo

# PostgreSQL server binaries for the tests (the tests start a throwaway server themselves).
postgres-binaries:
	@test -x $(PG_BIN)/initdb || { \
	  echo "installing PostgreSQL 15 server binaries"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null; }

lint: $(BIN)/.installed
	$(BIN)/ruff check dynavec_langgraph tests benchmarks
	$(BIN)/ruff format --check dynavec_langgraph tests benchmarks

typecheck: $(BIN)/.installed
	$(BIN)/mypy --strict

pytest: $(BIN)/.installed postgres-binaries
	$(BIN)/python -m pytest

test: lint typecheck pytest

bench: $(BIN)/.installed postgres-binaries
	$(BIN)/python -m benchmarks.run
