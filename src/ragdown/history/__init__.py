"""Version history and trash, beside the documents (not derived: it outlives the data dir)."""

from ragdown.history.store import HISTORY_DIR, HistoryStore, TrashEntry, Version

__all__ = ["HISTORY_DIR", "HistoryStore", "TrashEntry", "Version"]
