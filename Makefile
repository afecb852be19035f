# Two commands: `make run` and `make test`. Both create .venv if missing and install into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test lint install bench screenshots clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# torch first: a CPU build lies on this machine's disk; a bare `torch` would pull a CUDA build.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/chunk-inspector

# The contracts of pyproject.toml: ruff (style, lazy heavy imports), import-linter (the core imports
# no Qt; layers inside the core), mypy (the core is typed). `make test` runs them first.
lint: $(STAMP)
	$(BIN)/ruff check inspector tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/pip install -q -e '.[test,bench]'
	$(BIN)/python benchmarks/run_all.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m inspector.qt.screenshots docs

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
