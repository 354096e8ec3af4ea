"""Retrieval evaluation: `ragdown eval`, the benchmark scripts in `bench/` and the CI floor test.

- `metrics`: questions, the RESULTS format and the grading rules of the benchmark's `grade.py`;
- `runner`: questions through ragdown's own search path (hybrid, or the dense / lexical pools alone)
  and through the hook's gates;
- `command`: the `eval` subcommand.
"""
