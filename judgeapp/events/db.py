"""The database: one engine per app, sessions for reading and for writing, migrations, retries.

SQLite (the default, in the instance folder) runs in WAL mode with foreign keys on; a writing transaction
starts with BEGIN IMMEDIATE, so concurrent writers queue on the busy timeout instead of failing half-way.
PostgreSQL (DATABASE_URL) locks the player's row for the length of a recording. Either way a conflict that
slips through (two judges computing the same sequence number) is retried, never lost.
"""

from __future__ import annotations

import random
import time
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
RETRYABLE_CONSTRAINTS = ("penalty_player_seq_unique", "penalties.player_id, penalties.seq")


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # transactions are begun below, not by the driver
            cur = dbapi_conn.cursor()
            for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=30000", "synchronous=FULL"):
                cur.execute(f"PRAGMA {pragma}")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


class Database:
    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self.is_sqlite = url.startswith("sqlite")
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.engine.execution_options(write=True), expire_on_commit=False)

    def reader(self) -> Session:
        return self._read()

    @contextmanager
    def writing(self):
        """One write transaction (committed at the end, rolled back on any error)."""
        with self._write() as session, session.begin():
            yield session

    def write(self, fn, attempts: int = 12):
        """Run `fn(session)` in a write transaction; retry the conflicts concurrency can cause."""
        for attempt in range(attempts):
            try:
                with self.writing() as session:
                    return fn(session)
            except (IntegrityError, OperationalError, DBAPIError) as exc:
                if attempt == attempts - 1 or not _retryable(exc):
                    raise
                time.sleep(random.uniform(0.005, 0.03) * (attempt + 1))
        raise AssertionError("not reached")

    def upgrade(self) -> None:
        upgrade(self.url)

    def dispose(self) -> None:
        self.engine.dispose()


def _retryable(exc: Exception) -> bool:
    text = str(getattr(exc, "orig", exc))
    if isinstance(exc, IntegrityError):
        return any(c in text for c in RETRYABLE_CONSTRAINTS)
    code = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return "database is locked" in text or code in ("40001", "40P01")


def alembic_config(url: str):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, engine: Engine | None = None, revision: str = "head") -> None:
    """Bring the database's schema to `revision` (run by `judgeapp db upgrade` and by `judgeapp serve`).

    Without `engine`, the migrations get a plain connection of their own: on SQLite that one has foreign keys
    off (SQLite's default), which a migration that rebuilds a table needs."""
    from alembic import command

    cfg = alembic_config(url)
    if engine is not None:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    else:
        command.upgrade(cfg, revision)
