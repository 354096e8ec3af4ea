"""The index in PostgreSQL + pgvector, shared by several replicas (imported only with RAGDOWN_DATABASE_URL)."""
