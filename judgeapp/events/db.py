"""The database: one engine per app, one unit per request (a connection, an ORM session if asked for),
write transactions, migrations, retries.

SQLite (the default, in the instance folder) runs in WAL mode with foreign keys on; a writing transaction
starts with BEGIN IMMEDIATE, and the writers of one process queue on a lock of their own first (instead of
polling inside SQLite's busy timeout). PostgreSQL (DATABASE_URL) locks the rows a change depends on
(FOR UPDATE). Either way a conflict that slips through is retried, never lost.

`Database.open_unit()` opens the request's unit: one connection, checked out at the request's first
statement, and an ORM session made only when something reads through the ORM (`reader()`), on that same
connection (one checkout per request for reads). A recording through the API makes no session at all: its
statements go on the connection (`run`). Reads run without a transaction of their own (autocommit: each
statement sees the latest commits, as under PostgreSQL's READ COMMITTED), so a read costs no BEGIN, ROLLBACK
or pre-ping round trip; an ORM write gives the read connection back first and takes one of its own.
Recording (`write_core`) runs its few statements in SQLAlchemy Core, without a session, on the request's
connection (BEGIN and COMMIT sent on it).
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError, IntegrityError, OperationalError
from sqlalchemy.orm import Session, make_transient_to_detached, sessionmaker

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection
    from sqlalchemy.sql import Executable

T = TypeVar("T")

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
# Unique indexes two concurrent writers can both pass the check for; the retry then sees the other's row: a
# player's next seq, one judge's Idempotency-Key (used at once for two players: 422 on the retry), and a staff
# member's name in an event (two organizers adding one name, two phones joining as one: 409 on the retry).
RETRYABLE_CONSTRAINTS = (
    "penalty_player_seq_unique",
    "penalties.player_id, penalties.seq",
    "penalty_idempotency_unique",
    "penalties.judge_id, penalties.idempotency_key",
    "staff_name_unique",
    "staff.event_id, staff.name",
)


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=20, max_overflow=20
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
            dbapi_conn.isolation_level = None  # transactions are begun below, not by the driver
            cur = dbapi_conn.cursor()
            for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=30000", "synchronous=FULL"):
                cur.execute(f"PRAGMA {pragma}")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            # Writers take the write lock at once; readers run each statement in its own implicit transaction
            # (as PostgreSQL's READ COMMITTED reads do), so a read costs no BEGIN and no ROLLBACK.
            if conn.get_execution_options().get("write"):
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    # LIFO: under load the connection just given back is the one taken next, so it has sat idle for
    # microseconds (and the ping below is skipped); at a quiet time the others idle, and are pinged.
    engine = create_engine(url, pool_size=10, max_overflow=20, pool_use_lifo=True)

    @event.listens_for(engine, "connect")
    def _pg_autocommit(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
        dbapi_conn.autocommit = True  # transactions are begun below, not by the driver (as on SQLite)

    @event.listens_for(engine, "begin")
    def _pg_begin(conn: Connection) -> None:
        # Every transaction but the request's reads: those run each statement on its own (READ COMMITTED
        # takes a snapshot per statement anyway), so a read costs no BEGIN and no ROLLBACK, and the
        # connection needs no switching of its mode at each checkout. psycopg's commit() and rollback() send
        # COMMIT and ROLLBACK whenever the server is in a transaction.
        if not conn.get_execution_options().get("read"):
            conn.exec_driver_sql("BEGIN")

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_conn: Any, record: ConnectionPoolEntry) -> None:
        record.info["returned"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping(dbapi_conn: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection) -> None:
        """A connection the server has dropped while it sat in the pool (a restart, a failover) is replaced
        before use. A server that ends a connection (a restart, pg_terminate_backend, a backend killed) closes
        its socket, so a pooled connection whose socket has anything to read is suspect; that one, and any
        connection idle for more than PING_AFTER seconds (a peer gone silently), get one empty query at the
        libpq level (unlike SQLAlchemy's pre-ping, a SELECT 1 through the driver, it opens no transaction).
        A connection given back a moment ago with nothing to read is used as it is: no round trip."""
        idle = time.monotonic() - record.info.get("returned", float("-inf"))
        if not _pg_alive(dbapi_conn, ping=idle > PING_AFTER):
            raise DisconnectionError("the server closed the connection")

    return engine


PING_AFTER = 1.0  # seconds a pooled PostgreSQL connection may sit idle before its checkout pings the server


def _pg_alive(dbapi_conn: Any, ping: bool = True) -> bool:
    """False for a connection that is closed, broken, or (pinged) does not answer; a socket with something to
    read (the server's goodbye, or its end of file) is always pinged."""
    from psycopg import pq

    try:
        if dbapi_conn.closed or dbapi_conn.broken:
            return False
        if not ping and not _readable(dbapi_conn.pgconn.socket):
            return True
        return dbapi_conn.pgconn.exec_(b"").status == pq.ExecStatus.EMPTY_QUERY
    except Exception:  # noqa: BLE001 — any failure means the connection is not usable
        return False


def _readable(fd: int) -> bool:
    """Whether the socket has anything to read, now (poll: no limit on the descriptor's number, unlike
    select, which fails for one of 1024 or more in a process with many files open)."""
    p = select.poll()
    p.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(p.poll(0))


class _UnitSession(Session):
    """The request's ORM session: it runs on the unit's connection while the unit holds one (see `_Unit`)."""

    def get_bind(self, mapper: Any = None, **kw: Any) -> Any:
        unit = self.info.get("unit")
        if unit is not None and unit.conn is not None:
            return unit.conn
        return super().get_bind(mapper, **kw)


class _Unit:
    """A request's database unit (`Database.open_unit`): one connection, checked out at the first statement
    (`connection`), and the ORM session, made only when something reads through the ORM (`orm`, from
    `Database.reader`) and then run on that same connection. Objects read before the session exists
    (`attach`: the acting member) wait, detached, and join the session when it is made."""

    __slots__ = ("db", "conn", "session", "pending")

    def __init__(self, db: Database):
        self.db = db
        self.conn: Connection | None = None
        self.session: Session | None = None
        self.pending: list = []

    def connection(self) -> Connection:
        if self.session is not None:
            return self.session.connection()
        if self.conn is None:
            self.conn = self.db._read_engine.connect()
        return self.conn

    def orm(self) -> Session:
        if self.session is None:
            session = self.session = self.db._unit_session()
            session.info["unit"] = self
            for _key, obj in self.pending:
                session.add(obj)
            self.pending.clear()
        return self.session

    def lost(self) -> None:
        """The connection turned out dead: let it go (the next statement checks out a new one)."""
        if self.session is not None and self.session.in_transaction():
            self.session.rollback()
        self._release()

    def release(self) -> None:
        """Give the connection back to the pool (the session's objects stay usable; the next statement
        checks out a connection again)."""
        if self.session is not None and self.session.in_transaction():
            self.session.commit()
        self._release()

    def close(self) -> None:
        try:
            if self.session is not None:
                self.session.close()
        finally:
            self._release()

    def _release(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()


class Database:
    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self.is_sqlite = url.startswith("sqlite")
        # Reads run without BEGIN: under PostgreSQL's READ COMMITTED every statement takes its own snapshot
        # anyway, so a BEGIN and a ROLLBACK around them would only add round trips (see _pg_begin and
        # _sqlite_begin).
        self._read_engine = self.engine.execution_options(read=True)
        self._read = sessionmaker(self._read_engine, expire_on_commit=False)
        self._unit_session = sessionmaker(self._read_engine, class_=_UnitSession, expire_on_commit=False)
        self._write_engine = self.engine.execution_options(write=True)
        self._write = sessionmaker(self._write_engine, expire_on_commit=False)
        self._unit: ContextVar[_Unit | None] = ContextVar(f"judgeapp_db_{id(self)}", default=None)
        self._write_lock = _SQLiteWriteLock(url) if self.is_sqlite else nullcontext()

    def reader(self) -> AbstractContextManager[Session]:
        """A session for reading: the request's own (see `open_unit`), else a new one closed after the `with`."""
        current = self._unit.get()
        return nullcontext(current.orm()) if current is not None else self._read()

    @contextmanager
    def unit(self) -> Iterator[Session]:
        """A unit (see `open_unit`) with its ORM session for everything inside; closed at the end."""
        if self._unit.get() is not None:
            yield self._unit.get().orm()
            return
        token = self.open_unit()
        try:
            yield self._unit.get().orm()
        finally:
            self.close_unit(token)

    def open_unit(self) -> object:
        """The request's unit (one connection, an ORM session only if asked for), until `close_unit(token)`."""
        return self._unit.set(_Unit(self))

    def close_unit(self, token: Any) -> None:
        unit = self._unit.get()
        self._unit.reset(token)
        if unit is not None:
            unit.close()

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """One write transaction (committed at the end, rolled back on any error)."""
        with self._write() as session, session.begin():
            yield session

    def write(self, fn: Callable[[Session], T], attempts: int = 12) -> T:
        """Run `fn(session)` in a write transaction; retry the conflicts concurrency can cause."""
        return self._retrying(self.writing, fn, attempts)

    def write_core(
        self, fn: Callable[[Connection], T], attempts: int = 12, commits: bool = False, replays: bool = False
    ) -> T:
        """`write` for a path that needs no ORM: `fn(connection)` in one write transaction (SQLAlchemy Core,
        no session and no unit of work), retried the same way. Inside a request it runs on the request's own
        read connection (one checkout per request, no second connection taken and the first given back).
        With `commits` (inside a request), `fn` commits itself with its last statement (`commit_with`). With
        `replays`, `fn` finds its own earlier commit (an Idempotency-Key): a connection lost during the COMMIT
        is then tried again too, and the retry answers what landed."""
        unit = self._unit.get()
        if unit is None:
            return self._retrying(self._write_engine.begin, fn, attempts, replays=replays)
        return self._retrying(
            lambda: self._on_connection_of(unit, commit=not commits),
            fn,
            attempts,
            own_connection=False,
            replays=replays,
        )

    @contextmanager
    def _on_connection_of(self, unit: _Unit, commit: bool = True) -> Iterator[Connection]:
        """A write transaction on the unit's connection, which runs its reads without one (see `_read`): BEGIN
        (IMMEDIATE on SQLite: the write lock at once) and COMMIT sent as statements, ROLLBACK on any error. A
        connection found dead is let go (`_Unit.lost`), so that the retry checks out a new one."""
        conn = unit.connection()
        try:
            run_sql(conn, "BEGIN IMMEDIATE" if self.is_sqlite else "BEGIN")
            yield conn
            if commit:
                run_sql(conn, "COMMIT")
        except BaseException:
            if conn.invalidated:
                unit.lost()
            elif _in_transaction(conn.connection.dbapi_connection):  # not after a failed BEGIN
                conn.exec_driver_sql("ROLLBACK")
            raise

    def _retrying(
        self,
        transaction: Callable[[], AbstractContextManager[Any]],
        fn: Callable[[Any], T],
        attempts: int,
        own_connection: bool = True,
        replays: bool = False,
    ) -> T:
        """`fn` in `transaction()` behind the write lock, again after a conflict concurrency can cause, and
        again on a new connection when the pooled one turns out dead before the commit was sent (the server
        dropped it while it sat in the pool: nothing was written). A connection lost during the commit is
        never retried (the commit may have landed). With `own_connection`, the request's read connection is
        given back first (a request holds one connection at a time) and after."""
        if own_connection:
            self.end_read()
        try:
            for attempt in range(attempts):
                ran = False
                sent: list = []  # `commit` / `commit_with` note here that `fn` sent its own COMMIT
                token = _COMMIT_SENT.set(sent)
                try:
                    with self._write_lock, transaction() as tx:
                        result = fn(tx)
                        ran = True
                    return result
                except (IntegrityError, OperationalError, DBAPIError) as exc:
                    # dropped before any COMMIT was sent: nothing was written, try again on a new connection;
                    # a connection lost during a COMMIT is retried only when `fn` replays (the commit may
                    # have landed: the retry finds it by its key and answers it)
                    dropped = exc.connection_invalidated and ((not ran and not sent) or replays)
                    if attempt == attempts - 1 or not (dropped or _retryable(exc)):
                        raise
                    time.sleep(0 if dropped else random.uniform(0.005, 0.03) * (attempt + 1))
                finally:
                    _COMMIT_SENT.reset(token)
            raise AssertionError("not reached")
        finally:
            if own_connection:
                self.end_read()

    def first_rows(self, stmt: Executable, params: dict, build: Callable[[Any, list[tuple]], T]) -> T:
        """A request's first statement (the acting member), run by `run` (no ORM load) on the unit's
        connection, once more on a new connection if the pooled one turns out dead (the server ended it a
        moment before the checkout looked: see `_ping`); `build(where, rows)` makes the answer (`where` is
        the request's unit, or outside a request a reading session, for `attach`)."""
        unit = self._unit.get()
        if unit is None:
            with self._read() as s:
                return build(s, _run_retried(s.connection, s.rollback, stmt, params))
        return build(unit, _run_retried(unit.connection, unit.lost, stmt, params))

    def end_read(self) -> None:
        """Return the request's connection to the pool; the objects it loaded stay usable, and the next read
        sees the latest commits."""
        current = self._unit.get()
        if current is not None:
            current.release()

    def upgrade(self) -> None:
        upgrade(self.url)

    def dispose(self) -> None:
        self.engine.dispose()


_COMPILED: dict = {}


def transient(cls: type, **values: Any) -> Any:
    """A new mapped object holding `values` (columns and relationships), as `cls(**values)` would make it but
    without the ORM's per-attribute events: for an object that is only read (an answer), never added to a
    session."""
    obj = cls.__mapper__.class_manager.new_instance()
    obj.__dict__.update(values)
    return obj


def _run_retried(
    connection: Callable[[], Connection], lost: Callable[[], None], stmt: Executable, params: dict
):
    """`run` on `connection()`, once more on a new one when the first turns out dead (`lost` lets it go)."""
    try:
        return run(connection(), stmt, params)
    except DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
        lost()
        return run(connection(), stmt, params)


def attach(where: Session | _Unit, cls: type, values: dict, related: dict | None = None) -> Any:
    """The mapped object of one row read by `run` (`values`: every column attribute's value), as an ORM load
    would give it: the session's own object of that identity if it has one, else a new one in the session,
    persistent and unchanged (no SQL, nothing to flush), its relationships in `related` loaded. Cheaper than
    the ORM's load of a row (no loading context, no row processors built per statement). `where` is a session
    or a request's unit: until the unit makes its session (the first ORM read), the object waits detached
    (its columns and `related` readable) and joins the session when it is made."""
    mapper = cls.__mapper__
    key = mapper.identity_key_from_primary_key(tuple(values[c.key] for c in mapper.primary_key))
    if isinstance(where, _Unit):
        if where.session is None:
            for known, obj in where.pending:
                if known == key:
                    return obj
            obj = _loaded(mapper, values, related)
            # detached now (a lazy load raises instead of answering empty) and added when the session is
            # made (`_Unit.orm`)
            make_transient_to_detached(obj)
            where.pending.append((key, obj))
            return obj
        where = where.session
    found = where.identity_map.get(key)
    if found is not None:
        return found
    obj = _loaded(mapper, values, related)
    make_transient_to_detached(obj)
    where.add(obj)
    return obj


def _loaded(mapper: Any, values: dict, related: dict | None) -> Any:
    obj = mapper.class_manager.new_instance()
    obj.__dict__.update(values)
    if related:
        obj.__dict__.update(related)
    return obj


class _Plan:
    """A statement built once (a module constant), compiled once for a dialect and a set of parameter names:
    its SQL, how its parameters are bound (SQLAlchemy's own bind processors) and how its rows are read (its
    result processors)."""

    __slots__ = ("stmt", "sql", "processors", "constants", "names", "results")

    def __init__(self, stmt: Executable, dialect: Any, params: dict):
        self.stmt = stmt  # kept alive: the cache is keyed on its id
        keys = tuple(sorted(params))
        compiled = stmt.compile(dialect=dialect, column_keys=list(keys))
        self.sql = compiled.string
        self.processors = compiled._bind_processors
        # the statement's own values (literals SQLAlchemy binds as parameters), bound once
        self.constants = {
            k: (self.processors[k](v) if k in self.processors else v)
            for k, v in compiled.construct_params(params).items()
            if k not in params
        }
        self.names = compiled.positiontup if compiled.positional else None
        self.results = [e.type._cached_result_processor(dialect, None) for e in compiled._result_columns]
        if not any(self.results):
            self.results = None
        self._check(compiled, keys)

    @staticmethod
    def _check(compiled: Any, keys: tuple) -> None:
        # An INSERT gets every column's value from the caller: SQLAlchemy fills a Python-side default at
        # execution, which this path does not do.
        table = getattr(compiled.statement, "table", None)
        if compiled.isinsert and table is not None:
            missing = [c.name for c in table.c if c.default is not None and c.key not in keys]
            if missing:
                raise ValueError(f"run(): no value for {missing} (Python-side defaults are not applied)")


_PLANS: dict = {}
# The statements run() is made for are built once, at import; a caller building one per call would only fill
# this: past the bound, the plans are made again.
_MAX_PLANS = 512


def run(conn: Connection, stmt: Executable, params: dict | None = None) -> list[tuple]:
    """`conn.execute(stmt, params).all()` for a statement built once, without SQLAlchemy's per-execution
    layers (the statement's cache key, the execution context, the result object): compiled once per dialect
    and parameter names, its parameters bound by SQLAlchemy's processors, sent on the driver's cursor. What
    SQLAlchemy does around a statement still happens: the engine's `before_cursor_execute` and
    `after_cursor_execute` listeners are called, and an error comes back as SQLAlchemy's, a lost connection
    invalidated (`connection_invalidated`), as `conn.execute` would. Rows are plain tuples, read by the
    columns' result processors (JSON, datetimes on SQLite). Unlike `conn.execute`, it begins no transaction
    (SQLAlchemy's autobegin is not asked): the connections run in the driver's autocommit mode, so a write
    goes inside a transaction begun on the connection (`write_core`'s BEGIN), a read runs on its own."""
    params = params or {}
    keys = tuple(sorted(params))
    key = (id(stmt), keys, conn.dialect)
    plan = _PLANS.get(key)
    if plan is None or plan.stmt is not stmt:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _Plan(stmt, conn.dialect, params)
    processors = plan.processors
    bound = {k: (processors[k](v) if k in processors else v) for k, v in params.items()}
    if plan.constants:
        bound.update(plan.constants)
    args = tuple(bound[n] for n in plan.names) if plan.names is not None else bound
    rows = _send(conn, plan.sql, args)
    results = plan.results
    if results is None or not rows:
        return rows
    return [tuple(f(v) if f is not None else v for f, v in zip(results, row, strict=True)) for row in rows]


def run_sql(conn: Connection, sql: str) -> None:
    """`conn.exec_driver_sql(sql)` for a statement without parameters (BEGIN, COMMIT), the same way as `run`."""
    _send(conn, sql, None)


def _send(conn: Connection, sql: str, args: Any) -> list[tuple]:
    dbapi_conn = conn.connection.dbapi_connection
    dispatch = conn.dispatch if conn._has_events or conn.engine._has_events else None
    # the listeners of these two events only (the engine's own listen to others): none, none called
    before = dispatch.before_cursor_execute if dispatch is not None else None
    cursor = None
    try:
        cursor = dbapi_conn.cursor()
        if before:
            before(conn, cursor, sql, args, None, False)
        if args is None:
            cursor.execute(sql)
        else:
            cursor.execute(sql, args)
        if dispatch is not None and dispatch.after_cursor_execute:
            dispatch.after_cursor_execute(conn, cursor, sql, args, None, False)
        rows = cursor.fetchall() if _has_rows(cursor) else []
        cursor.close()
        return rows
    except BaseException as exc:
        conn._handle_dbapi_exception(exc, sql, args, cursor, None)


_TUPLES_OK = (
    2  # psycopg's pq.ExecStatus.TUPLES_OK (tests/test_records_trust.py holds it to it): rows answered
)


def _has_rows(cursor: Any) -> bool:
    """Whether the statement answered rows (psycopg: its result's status, for `description` builds a column
    object for every column at each look)."""
    result = getattr(cursor, "pgresult", None)
    if result is not None:
        return result.status == _TUPLES_OK
    return cursor.description is not None


# Set by `Database._retrying` for each try: `commit` and `commit_with` note in it that the transaction's own
# COMMIT went out, so that a connection lost from then on is not taken for one lost before anything was written.
_COMMIT_SENT: ContextVar[list | None] = ContextVar("judgeapp_commit_sent", default=None)


def _note_commit() -> None:
    sent = _COMMIT_SENT.get()
    if sent is not None:
        sent.append(True)


def commit(conn: Connection) -> None:
    """COMMIT sent by the transaction's own code (`write_core(commits=True)`): once sent, a lost connection is
    retried only when the write replays (`write_core(replays=True)`)."""
    _note_commit()
    run_sql(conn, "COMMIT")


def commit_with(conn: Connection, stmt: Executable, params: dict) -> Any:
    """PostgreSQL: the transaction's last statement and its COMMIT sent together, in one round trip (psycopg's
    pipeline mode), so that the row locks it holds are released a round trip sooner; returns the statement's
    first row. The statement is compiled once by SQLAlchemy and its parameters bound by SQLAlchemy's own
    processors (JSON as psycopg's Json). An error comes as SQLAlchemy's (so a conflict is retried as usual);
    nothing here is ever retried as a dropped connection: the commit may have landed. Elsewhere (SQLite, or a
    driver without pipelines) the statement runs and COMMIT follows as two statements."""
    dbapi_conn = conn.connection.dbapi_connection
    pipeline = getattr(dbapi_conn, "pipeline", None)
    if conn.dialect.name != "postgresql" or pipeline is None or not _pipelines():
        row = conn.execute(stmt, params).first()
        commit(conn)
        return row
    import psycopg

    key = (id(stmt), conn.dialect)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _COMPILED[key] = stmt.compile(dialect=conn.dialect)
    processors = compiled._bind_processors
    args = {
        k: (processors[k](v) if k in processors and v is not None else v)
        for k, v in compiled.construct_params(params).items()
    }
    _note_commit()  # the COMMIT goes out with the statement
    try:
        with pipeline():
            cur = dbapi_conn.cursor()
            if conn._has_events or conn.engine._has_events:  # listeners see these as any statement
                conn.dispatch.before_cursor_execute(conn, cur, compiled.string, args, None, False)
                conn.dispatch.before_cursor_execute(conn, cur, "COMMIT", {}, None, False)
            cur.execute(compiled.string, args)
            dbapi_conn.execute("COMMIT")
        return cur.fetchone()
    except psycopg.Error as exc:
        raise DBAPIError.instance(compiled.string, args, exc, psycopg.Error) from exc


@cache
def _pipelines() -> bool:
    from psycopg import Pipeline

    return Pipeline.is_supported()


class _SQLiteWriteLock:
    """Writers queue here instead of polling inside SQLite's busy timeout: a lock for the threads of this
    process, then an flock on `<database>.writelock` for the other processes (gunicorn workers; none on
    Windows, which has no flock). A waiter wakes the moment the holder is done."""

    def __init__(self, url: str):
        self._threads = threading.Lock()
        self._fd = None
        path = url.split("///", 1)[1] if "///" in url else ""
        try:
            import fcntl  # noqa: F401
        except ImportError:  # Windows: no flock, and no fork either (`judgeapp serve` runs one process)
            path = ""
        if path and path != ":memory:" and not path.startswith("file:"):
            self._path = path + ".writelock"
        else:
            self._path = None

    def __enter__(self):
        self._threads.acquire()
        try:
            if self._path is not None:
                import fcntl

                if self._fd is None:
                    self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise
        return self

    def __exit__(self, *exc):
        try:
            if self._fd is not None:
                import fcntl

                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()
        return False


def _in_transaction(dbapi_conn: Any) -> bool:
    """Whether the driver's connection is inside a transaction (sqlite3, psycopg)."""
    info = getattr(dbapi_conn, "info", None)
    if info is not None and hasattr(info, "transaction_status"):
        from psycopg import pq

        return info.transaction_status != pq.TransactionStatus.IDLE
    return dbapi_conn.in_transaction


def _retryable(exc: Exception) -> bool:
    text = str(getattr(exc, "orig", exc))
    if isinstance(exc, IntegrityError):
        return any(c in text for c in RETRYABLE_CONSTRAINTS)
    code = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return "database is locked" in text or code in ("40001", "40P01")


def alembic_config(url: str) -> Config:
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
