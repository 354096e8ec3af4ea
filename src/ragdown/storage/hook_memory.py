"""The hook's session memory in this process (the SQLite backend's; on PostgreSQL the replicas share tables):
the chunks each (scope, session) was given, so a session is not given the same section twice."""

from __future__ import annotations

import threading
from collections import OrderedDict

HOOK_SESSIONS = 200


class HookMemory:
    """The chunks each (scope, session) was given, for the last 200 sessions."""

    def __init__(self, capacity: int = HOOK_SESSIONS) -> None:
        self._capacity = capacity
        self._sessions: OrderedDict[str, set[str]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(scope_dir: str, session_id: str) -> str:
        return f"{scope_dir}\x00{session_id}"

    def seen(self, key: str) -> set[str]:
        with self._lock:
            seen = self._sessions.get(key)
            if seen is None:
                return set()
            self._sessions.move_to_end(key)
            return set(seen)

    def add(self, key: str, chunk_keys: list[str]) -> None:
        with self._lock:
            seen = self._sessions.setdefault(key, set())
            seen.update(chunk_keys)
            self._sessions.move_to_end(key)
            while len(self._sessions) > self._capacity:
                self._sessions.popitem(last=False)

    def reset(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)
