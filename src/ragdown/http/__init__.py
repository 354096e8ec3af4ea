"""`ragdown serve`: folders as MCP endpoints, the `/api` routes and the web UI over HTTP."""
