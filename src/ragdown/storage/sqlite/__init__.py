"""The embedded index: one SQLite file in WAL mode, the dense matrix in memory, the primary's lock and socket."""
