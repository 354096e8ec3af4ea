"""ragdown's own tools, one `ToolSpec` each (`catalog.py` lists them), and what the CLI's search and index print."""
