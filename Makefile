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

serve: $(STAMP)
	@test -n "$(DOCS)" || (echo "usage: make serve DOCS=~/notes" >&2; exit 2)
	RAGDOWN_DOCS_DIR="$(DOCS)" SECURE_LOCAL_NET=$${SECURE_LOCAL_NET:-true} $(BIN)/ragdown serve

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
