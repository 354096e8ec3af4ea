# The two commands of the README live here: `make serve DOCS=~/notes` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
DOCS ?=

.PHONY: install serve stdio test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "ragdown needs Python 3.11 or newer"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,offline]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

# Without RAGDOWN_TOKEN this serves on 127.0.0.1 only, with no token (this machine is the trusted net);
# with RAGDOWN_TOKEN set it listens on every interface and requires the token.
serve: $(STAMP)
	@test -n "$(DOCS)" || (echo "usage: make serve DOCS=~/notes" >&2; exit 2)
	@if [ -n "$$RAGDOWN_TOKEN" ]; then \
	  RAGDOWN_DOCS_DIR="$(DOCS)" $(BIN)/ragdown serve; \
	else \
	  RAGDOWN_DOCS_DIR="$(DOCS)" SECURE_LOCAL_NET=true RAGDOWN_HOST=$${RAGDOWN_HOST:-127.0.0.1} $(BIN)/ragdown serve; \
	fi

stdio: $(STAMP)
	@test -n "$(DOCS)" || (echo "usage: make stdio DOCS=~/notes" >&2; exit 2)
	RAGDOWN_DOCS_DIR="$(DOCS)" $(BIN)/ragdown stdio

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck unit

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build src/*.egg-info
