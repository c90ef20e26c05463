# Two commands on a fresh machine: `make run` serves the default vault, `make test` passes the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint format inspector clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/memvault --vault memories serve --transport http --host 127.0.0.1 --port 3000

lint: $(STAMP)
	$(BIN)/ruff check memvault tests
	$(BIN)/ruff format --check memvault tests
	$(BIN)/mypy memvault

test: $(STAMP)
	$(MAKE) lint
	$(BIN)/pytest

inspector: $(STAMP)
	scripts/inspector_check.sh

format: $(STAMP)
	$(BIN)/ruff format memvault tests
	$(BIN)/ruff check --fix memvault tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
