"""OAuth 2.1 for hosted MCP clients, on the `mcp` SDK's server auth: routes, the provider, grants and scopes."""
