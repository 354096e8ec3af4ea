"""Keeping the index in step with the files: the diff sync, the watcher, and a long sync's progress."""
