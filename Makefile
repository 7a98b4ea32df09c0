# The two commands of the README:  `make demo`  (the main job)  and  `make test`  (everything CI runs).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PG_BIN ?= /usr/lib/postgresql/15/bin

.PHONY: demo test test-fast lint typecheck pytest reference-prebuilt reference-langchain \
	lower-bounds bench notebooks postgres-binaries browser-tools agent-chat-ui redis-server cluster

# uv installs the demo's packages in seconds (pip takes most of a minute): the `uv` on PATH, or
# the `uv` package installed by name once into ~/.cache/dynavec-langgraph/uv/. When neither can
# be had, the demo installs with pip.
TOOLS ?= $(HOME)/.cache/dynavec-langgraph
UV ?= $(or $(shell command -v uv 2>/dev/null),$(TOOLS)/uv/bin/uv)

$(TOOLS)/uv/bin/uv:
	-PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
	  $(PYTHON) -m pip install -q --no-compile --upgrade --target $(TOOLS)/uv uv

# What the demo needs: the package and its `sqlite` extra (no test tools), in a virtualenv with
# pip (`--seed`), so `make test` and `.venv/bin/python -m pip` work on it afterwards. If uv
# fails, pip installs it.
$(BIN)/.demo-installed: pyproject.toml | $(UV)
	{ test -x $(UV) && { test -x $(BIN)/python || $(UV) venv -q --seed --no-python-downloads --python $(PYTHON) $(VENV); } && \
	  $(UV) pip install -q --python $(BIN)/python -e '.[sqlite]'; } || \
	{ $(PYTHON) -m venv $(VENV) && \
	  $(BIN)/python -m pip install -q --disable-pip-version-check -e '.[sqlite]'; }
	touch $@

# Everything else: the test tools and every extra (`.[dev]`), with uv when it can be had (about
# 35 s on two cores, pip about 65 s), else pip. `--compile-bytecode`: the tests' many child
# processes then import LangGraph from bytecode even where PYTHONDONTWRITEBYTECODE is set (without
# it each child compiles what it imports: 2.8 s instead of 1.3 s to import the package).
$(BIN)/.installed: pyproject.toml | $(UV)
	{ test -x $(UV) && { test -x $(BIN)/python || $(UV) venv -q --seed --no-python-downloads --python $(PYTHON) $(VENV); } && \
	  $(UV) pip install -q --compile-bytecode --python $(BIN)/python -e '.[dev]'; } || \
	{ $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install -q --upgrade pip && \
	  $(BIN)/python -m pip install -q -e '.[dev]'; }
	touch $@ $(BIN)/.demo-installed

demo: $(BIN)/.demo-installed
	$(BIN)/dynavec-langgraph demo

# PostgreSQL server binaries for the tests (the tests start a throwaway server themselves).
postgres-binaries:
	@test -x $(PG_BIN)/initdb || { \
	  echo "installing PostgreSQL 15 server binaries"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null; }

# The browser test: headless Chromium + its driver (Debian packages), and Node.js/npm to build the
# Agent Chat UI; each installed only when missing.
browser-tools:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v chromedriver >/dev/null || missing="$$missing chromium-driver"; \
	command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	test -z "$$missing" || { echo "installing$$missing"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }

# The Agent Chat UI (npm package create-agent-chat-app, vite template), built once and cached
# outside the clone (~/.cache/dynavec-langgraph/agent-chat-ui-<version>). A failed build does
# not stop the other tests: the browser test tries again and fails with the reason.
agent-chat-ui: $(BIN)/.installed browser-tools
	-$(BIN)/python -m tests.agent_chat_ui

# Redis for the LangGraph API cluster (tests/test_cluster.py, `make cluster`): Debian's package.
redis-server:
	@command -v redis-server >/dev/null || { \
	  echo "installing redis-server"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }

# A local cluster for docs/scale-out.md: PostgreSQL + Redis + two `langhost serve` servers
# on 127.0.0.1 serving langgraph.json; Ctrl-C stops it. The server stack gets its own virtualenv
# under ~/.cache/dynavec-langgraph/ (made on first use, ~2 min).
cluster: $(BIN)/.installed postgres-binaries redis-server
	$(BIN)/python -m tests.cluster

lint: $(BIN)/.installed
	$(BIN)/ruff check dynavec_langgraph tests benchmarks
	$(BIN)/ruff format --check dynavec_langgraph tests benchmarks

# mypy's cache outside the clone (~/.cache/dynavec-langgraph/mypy): a fresh clone's files have new
# times, so mypy compares their hashes and re-checks only what changed (3 s instead of 49 s).
typecheck: $(BIN)/.installed
	$(BIN)/mypy --strict --cache-dir $(TOOLS)/mypy

# The whole suite on pytest-xdist: TEST_WORKERS workers (default 4 on this two-core machine:
# most service tests wait on the servers and processes they start, so two workers per core keep
# both cores busy), a test module per worker (its servers started once), the modules that start
# the most services sent out first (tests/conftest.py) so no long module is left for the end;
# then the few tests that bound a wall-clock time (marked `timing`) alone, on a quiet machine.
# uv (`$(UV)`) makes the release test's virtualenvs from the built wheel in seconds.
TEST_WORKERS ?= 4
pytest: $(BIN)/.installed postgres-binaries redis-server agent-chat-ui | $(UV)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=20 -m "not timing"
	$(BIN)/python -m pytest -p no:xdist -m timing

# LangGraph's prebuilt test suite against this package's create_react_agent: the source release
# of the installed langgraph-prebuilt, fetched by name (cached in ~/.cache/dynavec-langgraph/),
# its tests that build an agent, less tests/reference/prebuilt_deselected.txt.
reference-prebuilt: $(BIN)/.installed
	$(BIN)/python -m tests.reference.prebuilt

# The lower bounds of pyproject.toml's dependencies, installed in a throwaway venv (cached in
# ~/.cache/dynavec-langgraph/), and a smoke run of the package on them.
lower-bounds: $(BIN)/.installed
	$(BIN)/python -m tests.lower_bounds

# LangChain's own agent unit tests (the langchain sdist of the installed version, fetched by pip
# into ~/.cache/dynavec-langgraph/) against dynavec_langgraph.create_agent; the tests left out
# are named in tests/reference/langchain_deselected.txt.
reference-langchain: $(BIN)/.installed
	$(BIN)/python -m tests.reference.langchain_agents

# One after another. Side by side (make -j) saved nothing: on a fresh clone of this two-core
# machine `make test` took 877 s so, and 901 s one after another (the suite's CPU bounds both).
test: lint typecheck pytest reference-prebuilt reference-langchain lower-bounds

# The tests that start no server, no notebook kernel and no other process (not marked `service`,
# see tests/conftest.py) and do not wait by design (not marked `slow`: a timeout run out, a
# saver made slow, a 60-run thread; 16 tests): under a minute on two cores. One pytest-xdist
# worker per core (`-n auto`), a test module per worker (its imports and module fixtures paid
# once; the chat providers' doctests on the worker of the providers' own tests, which import the
# same SDKs: SHARED_WORKER in tests/conftest.py). The temporary files (the tests' SQLite files)
# go to the RAM disk /dev/shm where the machine has one, so no test waits for the disk to flush
# a commit. Python's bytecode cache
# (__pycache__/, ignored by git) is kept where the environment turns it off: collecting reads
# every test module, and a second run skips recompiling them. The pytest plugins of installed
# packages that no test here uses (LangSmith's, syrupy's, platformdirs') are not loaded.
# `FAST=tests/test_graph.py` narrows it to one file, `FAST_WORKERS=3` sets the worker count;
# `make test` runs every test, `service` and `slow` ones included.
FAST_WORKERS ?= auto
FAST_TMP := $(wildcard /dev/shm)
FAST_PLUGINS := -p no:langsmith_plugin -p no:syrupy -p no:platformdirs
test-fast: $(BIN)/.installed
	$(if $(FAST_TMP),TMPDIR=$(FAST_TMP) )PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(FAST_WORKERS) --dist loadfile -m "not service and not slow" $(FAST_PLUGINS) $(FAST)

# Run every notebook and store it with its outputs (tests/test_notebooks.py compares them).
notebooks: $(BIN)/.installed
	$(BIN)/python -m tests.test_notebooks

bench: $(BIN)/.installed postgres-binaries
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.temporal
