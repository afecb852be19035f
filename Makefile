# Two commands: `make run` and `make test`. Both create .venv if missing and install into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# The CPU needs its cores for the model; on a GPU the embedder turns the tokenizer's threads on.
export TOKENIZERS_PARALLELISM := false

# TORCH=cuda, for NVIDIA GPUs (`make run TORCH=cuda`): torch==2.13.0 from the package index
# itself, whose Linux wheel is the CUDA build; pip's local configuration (the CPU wheel on this
# machine's disk) is set aside for that one command. Default: the CPU build, as before.
# The stamp names the build: TORCH=cuda on a CPU .venv installs again (`make clean` to go back).
TORCH ?= cpu
ifeq ($(TORCH),cuda)
TORCH_INSTALL := env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null $(BIN)/pip install -q --force-reinstall torch==2.13.0
STAMP := $(VENV)/.installed-cuda
else
TORCH_INSTALL := $(BIN)/pip install -q torch==2.13.0
endif

.PHONY: run test lint install bench screenshots clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# torch first: a CPU build lies on this machine's disk; a bare `torch` would pull a CUDA build.
$(STAMP): $(BIN)/python pyproject.toml
	$(TORCH_INSTALL)
	$(BIN)/pip install -q -e '.[test,fast]'
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

# Two pytest-xdist workers, one per core (tests/conftest.py gives each worker's torch one thread);
# loadgroup keeps the Ray module's tests, which share one local cluster, in one worker, and since
# xdist hands out the largest work unit first (--loadscope-reorder, its default) that group of 14
# tests starts at once instead of ending the run; every other test is a unit of its own.
# worksteal ignores xdist_group (each worker would start a cluster); loadscope makes each module
# one unit (coarser: a slow module could not be shared out).
# `make test TEST_WORKERS=0` runs in one process.
TEST_WORKERS ?= 2

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

bench: $(STAMP)
	$(BIN)/pip install -q -e '.[test,bench]'
	$(BIN)/python benchmarks/run_all.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m inspector.qt.screenshots docs

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
