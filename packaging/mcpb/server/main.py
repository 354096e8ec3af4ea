"""The bundle's entry point: `ragdown stdio` on the folder the user chose (RAGDOWN_DOCS_DIR)."""

from ragdown.cli.main import main

raise SystemExit(main(["stdio"]))
