"""The MCP face: a server per scope from the tool specs, the stdio entry, resources and prompts."""
