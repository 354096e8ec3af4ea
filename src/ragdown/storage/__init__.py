"""Where the index lives: the backend interface, with SQLite (embedded) and PostgreSQL + pgvector beside it."""
