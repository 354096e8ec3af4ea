"""The write path: the one door every change goes through, and the index.md upkeep after it."""
