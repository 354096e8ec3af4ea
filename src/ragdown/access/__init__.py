"""Who calls and what they may see and do: the caller's access, API keys, and an endpoint's scope."""
