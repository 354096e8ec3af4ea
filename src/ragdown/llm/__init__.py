"""Optional model features of MarkIndex (seed 001): node summaries and document descriptions at index time,
the `retrieve` loop over the markindex tools, and agent-mode evaluation.

Nothing here sends anything anywhere unless a model is named (`--summary-model`, `--model`,
`RAGDOWN_LLM_MODEL`). `providers.py` speaks the two wire formats (`openai:` chat completions, `anthropic:`
Messages) with tool calling and retries; `ratelimit.py` is the client-side budget shared by a run's calls;
MarkIndex's token estimate is `documents.tree.estimate_tokens`.
"""
