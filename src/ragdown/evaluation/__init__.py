"""Retrieval evaluation: `ragdown eval`, the benchmark scripts in `bench/` and the CI floor test.

- `questions`: a question set as the benchmark writes it, each question's language, a result hit;
- `gold`: gold given as a title path, resolved to lines in the corpus;
- `metrics`: the RESULTS format and the grading rules of the benchmark's `grade.py`, evidence included;
- `runner`: questions through ragdown's own search path (hybrid, or the dense / lexical pools alone)
  and through the hook's gates;
- `command`: the `eval` subcommand.
"""
