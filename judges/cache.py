"""An on-disk request cache: reruns and resumed runs cost no judge calls.

The key is a SHA-256 of the model, the messages and the sampling params, so any change to the
prompt template or to ``ChatParams`` misses. Storage is one SQLite file (WAL mode), safe to share
between processes and threads; each process opens its own connection lazily, so the cache pickles.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path

from rewardsmith.judges.base import ChatParams, ChatResult, Message
from rewardsmith.transient import KeepsConfig

_SCHEMA = "CREATE TABLE IF NOT EXISTS judge_cache (key TEXT PRIMARY KEY, model TEXT, result TEXT, created REAL)"


def cache_key(model: str, messages: list[Message], params: ChatParams) -> str:
    payload = json.dumps(
        {
            "model": model,
            "messages": messages,
            "params": params.model_dump(mode="json", exclude={*_unset_fields(params)}),
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _unset_fields(params: ChatParams) -> set[str]:
    """Newer optional fields left unset stay out of the key, so caches written before they existed still hit."""
    return {"json_schema"} if params.json_schema is None else set()


class RequestCache(KeepsConfig):
    """SQLite-backed map from :func:`cache_key` to :class:`ChatResult`, counting hits and misses."""

    def __init__(self, directory: str | os.PathLike[str], filename: str = "judge-cache.sqlite") -> None:
        self.path = Path(directory).expanduser() / filename
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connect()  # create the table now so a bad path fails at construction

    _PICKLED = ("path", "hits", "misses")

    def _rebuild(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None or getattr(self._local, "pid", None) != os.getpid():
            connection = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(_SCHEMA)
            self._local.connection = connection
            self._local.pid = os.getpid()
        return connection

    def get(self, key: str) -> ChatResult | None:
        row = self._connect().execute("SELECT result FROM judge_cache WHERE key = ?", (key,)).fetchone()
        with self._lock:
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return ChatResult.model_validate_json(row[0]).model_copy(update={"cached": True})

    def put(self, key: str, result: ChatResult) -> None:
        stored = result.model_copy(update={"cached": False, "retries": 0}).model_dump_json()
        self._connect().execute(
            "INSERT OR REPLACE INTO judge_cache (key, model, result, created) VALUES (?, ?, ?, julianday('now'))",
            (key, result.model, stored),
        )

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]

    def clear(self) -> None:
        self._connect().execute("DELETE FROM judge_cache")
