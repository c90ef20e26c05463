# Two commands on a fresh machine: `make run` serves the default vault, `make test` passes the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install compile run ui chromium screenshots test test-fast lint format inspector bench bench-full bench-peers bench-quality clean

install: $(STAMP)

# The last step quantises the default model once into the user's cache (memvault/model_cache.py).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,semantic]'
	$(BIN)/python -c 'from memvault.semantic.model import find_model; find_model(None)'
	touch $(STAMP)

# Bytecode for memvault itself, as pip writes it for installed packages: every command starts
# without compiling memvault's modules first (the editable install leaves them uncompiled).
compile: $(STAMP)
	$(BIN)/python -m compileall -q memvault

# `make run VAULT=~/notes PORT=3001` serves another folder on another port.
VAULT ?= memories
PORT ?= 3000

run: compile
	$(BIN)/memvault --vault "$(VAULT)" serve --transport http --host 127.0.0.1 --port $(PORT)

# The web page (`memvault ui`: a free port, opens the browser); `make ui VAULT=~/notes` too.
ui: compile
	$(BIN)/memvault --vault "$(VAULT)" ui

# Debian's chromium, for the web page's browser tests (tests/test_web_page.py), when missing.
chromium:
	@command -v chromium >/dev/null || { \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium; }

# The web page's screenshots in docs/operations.md, taken by its browser tests at 1280x800.
screenshots: $(STAMP) chromium
	MEMVAULT_SCREENSHOTS=docs/screenshots $(BIN)/pytest -q tests/test_web_page.py

lint: $(STAMP)
	$(BIN)/ruff check memvault tests benchmarks
	$(BIN)/ruff format --check memvault tests benchmarks
	$(BIN)/mypy memvault
	$(BIN)/lint-imports --no-cache

test: $(STAMP) chromium
	$(MAKE) lint
	$(BIN)/pytest

# The inner loop: the in-process tier, no server, CLI process or browser (tests marked
# `processes` are left out; one that starts a process unmarked fails, naming the marker).
test-fast: $(STAMP)
	MEMVAULT_TEST_TIER=fast $(BIN)/pytest -m "not processes"

inspector: $(STAMP)
	scripts/inspector_check.sh

# Benchmarks (never part of `make test`): memvault against a minimal floor on generated vaults.
bench: compile chromium
	$(BIN)/python benchmarks/run.py --sizes 1000 10000

bench-full: compile chromium
	$(BIN)/python benchmarks/run.py --sizes 1000 10000 100000

bench-peers: $(STAMP)
	$(BIN)/python benchmarks/peers.py

# Search quality (recall@1/5/10, MRR) on the LoCoMo dev split and our own npm-docs questions.
bench-quality: $(STAMP)
	$(BIN)/python benchmarks/quality.py

format: $(STAMP)
	$(BIN)/ruff format memvault tests benchmarks
	$(BIN)/ruff check --fix memvault tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
