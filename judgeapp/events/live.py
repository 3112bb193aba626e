"""Live updates for the head judge's desk: Server-Sent Events fed by PostgreSQL LISTEN/NOTIFY, or on SQLite
by a table every process polls.

A change (a record, a void, an appeal, a decision, a notice, the round) calls `announce(session, event_id,
kind)` inside its write transaction:

- on PostgreSQL it runs `pg_notify`, which the server delivers when (and only when) the transaction commits,
  to every process that listens: each server process keeps one listening connection (a daemon thread) and
  hands what arrives to its own open streams, so a desk served by one process sees a record made on another;
- on SQLite the announcement is written into `live_notes` in the same transaction (so it exists only if the
  transaction commits), and waits in the session until it commits, when it is handed to the streams of this
  process at once. Each process keeps one polling thread (a daemon, one `SELECT … WHERE id > last` every
  `POLL_SECONDS` on a connection of its own) that hands the notes of the other processes to its streams: a
  note carries its process's `origin`, and a process skips its own (already handed over at commit). A writer
  deletes the notes older than `NOTE_SECONDS` now and then, in its own transaction (notifications, not
  records): the pollers only read.

The stream carries only "something changed" (the kind and the event); the desk then fetches its fragment
again, so what it shows always comes from the database, never from the message. A stream ends after
`STREAM_SECONDS` (the browser reconnects by itself, and the desk fetches its fragment on each `hello`: a change
made while it had no stream open was announced to none), and a process holds at most `MAX_STREAMS` streams at
once, so open desks cannot take every worker thread from the judges' pages.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, delete, func, insert, select, text
from sqlalchemy import event as sa_event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.orm import Session

from .models import LiveNote, utcnow

if TYPE_CHECKING:
    from flask import Flask

    from .models import Staff

log = logging.getLogger(__name__)

KINDS = ("record", "void", "appeal", "decision", "notice", "ack", "round", "seats", "players")
STREAM_SECONDS = 55  # then the browser reconnects (EventSource does it by itself)
PING_SECONDS = 15  # a comment line keeps proxies from closing an idle stream
MAX_STREAMS = 24  # per process; beyond it a desk falls back to reloading
POLL_SECONDS = 0.3  # SQLite: how often a process looks for the other processes' notes
NOTE_SECONDS = 300  # SQLite: a note older than this is deleted (by a writer of each process, once a minute)
PRUNE_SECONDS = 60
_NOTIFY = text("SELECT pg_notify(:c, :p)")
_NOTE = insert(LiveNote.__table__)
_PRUNE = delete(LiveNote.__table__).where(LiveNote.__table__.c.created_at < bindparam("old"))


def channel_for(url: str) -> str:
    """The NOTIFY channel: one per database and schema (tests run side by side in schemas of their own)."""
    return "judgeapp_live_" + hashlib.sha1(url.encode()).hexdigest()[:12]


def _on_sqlite_file(url: str) -> bool:
    """Whether the URL is a SQLite database file that other processes may share (not an in-memory one)."""
    path = (make_url(url).database or "") if url.startswith("sqlite") else ""
    return bool(path) and path != ":memory:" and not path.startswith("file:")


class Hub:
    """The streams open in this process, and the thread that hears the other processes: a connection that
    listens (PostgreSQL) or polls `live_notes` (SQLite on a file)."""

    def __init__(self, url: str, max_streams: int = MAX_STREAMS):
        self.url = url
        self.is_postgres = url.startswith("postgresql")
        self.polls = _on_sqlite_file(url)
        self._tag = secrets.token_hex(4)
        self._prune_at = 0.0  # when a writer of this process next deletes the old notes (`note`)
        self.channel = channel_for(url)
        self.max_streams = max_streams
        self._lock = threading.Lock()
        self._subs: dict[int, set[queue.Queue]] = {}
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        self._listening = threading.Event()

    # --- publishing -----------------------------------------------------------------------------------

    def announce(self, session: Session, event_id: int, kind: str, **extra) -> None:
        """Tell every desk of `event_id` that something of `kind` changed, once the transaction commits."""
        payload = json.dumps({"event": event_id, "kind": kind, **extra}, ensure_ascii=False)
        if self.is_postgres:
            session.connection().execute(_NOTIFY, {"c": self.channel, "p": payload})
        else:
            self.note(session.connection(), payload)
            pending = session.info.setdefault("judgeapp.live", [])
            if not pending:
                sa_event.listen(session, "after_commit", self._after_commit, once=True)
                sa_event.listen(session, "after_rollback", _forget, once=True)
            pending.append(payload)

    @property
    def origin(self) -> str:
        """This process's tag on the notes it writes: its pid (a worker forked from the process that made the
        hub has its own), and a tag of the hub's (processes of other servers on the file, in containers, may
        have the same pids). A pid used again by a later worker is no matter: its poller starts after the
        notes of the one before."""
        return f"{os.getpid()}-{self._tag}"

    def note(self, conn: Connection, payload: str) -> None:
        """SQLite: the announcement as a row of `live_notes`, in the caller's write transaction (the other
        processes' pollers find it once it commits)."""
        if self.polls:
            now = utcnow()
            conn.execute(_NOTE, {"origin": self.origin, "payload": payload, "created_at": now})
            if time.monotonic() >= self._prune_at:  # now and then, under the write lock this writer holds
                self._prune_at = time.monotonic() + PRUNE_SECONDS
                conn.execute(_PRUNE, {"old": now - timedelta(seconds=NOTE_SECONDS)})

    def _after_commit(self, session: Session) -> None:
        for payload in session.info.pop("judgeapp.live", []):
            self.dispatch(payload)

    def dispatch(self, payload: str) -> None:
        """Hand one announcement to this process's streams for its event."""
        try:
            event_id = int(json.loads(payload)["event"])
        except (ValueError, KeyError, TypeError):
            return
        with self._lock:
            targets = list(self._subs.get(event_id, ()))
        for q in targets:
            # A stalled desk's queue is full: it reloads its fragment on the next message anyway.
            with contextlib.suppress(queue.Full):
                q.put_nowait(payload)

    # --- hearing the other processes: listening (PostgreSQL), polling (SQLite) ------------------------------

    def start(self) -> None:
        """Start the thread that hears the other processes (idempotent; none for an in-memory SQLite). Waits
        until LISTEN is in place, or the poller knows where the notes are."""
        if not (self.is_postgres or self.polls):
            return
        with self._lock:
            if self._listener is None or not self._listener.is_alive():
                self._listening.clear()
                target = self._listen if self.is_postgres else self._poll
                self._listener = threading.Thread(target=target, name="judgeapp-listen", daemon=True)
                self._listener.start()
        self._listening.wait(5)

    def _conninfo(self) -> str:
        return make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)

    def _listen(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._conninfo(), autocommit=True) as conn:
                    conn.execute(f'LISTEN "{self.channel}"')
                    self._listening.set()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=1.0):
                            self.dispatch(note.payload)
            except Exception as exc:  # noqa: BLE001 — the server went away: reconnect, desks reload meanwhile
                self._listening.clear()
                log.warning("live: listening connection lost (%s); reconnecting", type(exc).__name__)
                self.dispatch_all('{"kind": "reconnect"}')
                time.sleep(1)

    def _poll(self) -> None:
        """SQLite: every POLL_SECONDS, the notes written since the last look, on a connection of its own (each
        statement sees the latest commits); the other processes' notes go to this process's streams. It only
        reads (the writers delete old notes: `note`). Ids grow (one writer at a time, AUTOINCREMENT)."""
        from .db import make_engine

        notes = LiveNote.__table__
        newer = select(notes.c.id, notes.c.origin, notes.c.payload).where(notes.c.id > bindparam("last"))
        newer = newer.order_by(notes.c.id)
        engine = make_engine(self.url)
        last = None
        try:
            while not self._stop.is_set():
                try:
                    with engine.connect() as conn:
                        if last is None:
                            last = conn.execute(select(func.max(notes.c.id))).scalar() or 0
                        conn.commit()
                        self._listening.set()
                        while not self._stop.wait(POLL_SECONDS):
                            for nid, origin, payload in conn.execute(newer, {"last": last}).all():
                                last = nid
                                if origin != self.origin:
                                    self.dispatch(payload)
                            conn.commit()
                except Exception as exc:  # noqa: BLE001 — the file went away for a moment: desks reload meanwhile
                    log.warning("live: polling the notes failed (%s); again in 1 s", type(exc).__name__)
                    self.dispatch_all('{"kind": "reconnect"}')
                    time.sleep(1)
        finally:
            engine.dispose()

    def dispatch_all(self, payload: str | None) -> None:
        with self._lock:
            targets = [q for qs in self._subs.values() for q in qs]
        for q in targets:
            with contextlib.suppress(queue.Full):
                q.put_nowait(payload)

    def stop(self) -> None:
        """The listening or polling thread stops, and every open stream ends (the browsers reconnect, to
        another process): a worker told to quit (judgeapp/gunicorn_conf.py's worker_int) exits at once."""
        self._stop.set()
        self.dispatch_all(None)

    # --- streams ---------------------------------------------------------------------------------------

    def open_streams(self) -> int:
        with self._lock:
            return sum(len(qs) for qs in self._subs.values())

    def subscribe(self, event_id: int) -> queue.Queue | None:
        """A queue of this event's announcements, or None when the process has no stream to spare."""
        self.start()
        q: queue.Queue = queue.Queue(maxsize=100)
        with self._lock:
            if sum(len(qs) for qs in self._subs.values()) >= self.max_streams:
                return None
            self._subs.setdefault(event_id, set()).add(q)
        return q

    def unsubscribe(self, event_id: int, q: queue.Queue) -> None:
        with self._lock:
            qs = self._subs.get(event_id)
            if qs is not None:
                qs.discard(q)
                if not qs:
                    del self._subs[event_id]

    def stream(self, event_id: int, q: queue.Queue, seconds: float = STREAM_SECONDS) -> Iterator[str]:
        """The text/event-stream body: a greeting (so headers go out at once), then one `change` event per
        announcement, pings in between; it ends after `seconds`, and always unsubscribes."""
        try:
            yield "retry: 2000\nevent: hello\ndata: {}\n\n"
            n = 0
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                try:
                    payload = q.get(timeout=min(PING_SECONDS, left))
                except queue.Empty:
                    yield ": ping\n\n"
                    continue
                if payload is None or self._stop.is_set():  # the hub stopped: the process is ending
                    return
                n += 1
                yield f"id: {n}\nevent: change\ndata: {payload}\n\n"
        finally:
            self.unsubscribe(event_id, q)


def announce(session: Session, event_id: int, kind: str, **extra) -> None:
    """Tell the desks of the running app (after commit). Outside an app (a script) there are none."""
    from flask import current_app, has_app_context

    if has_app_context():
        hub_for(current_app).announce(session, event_id, kind, **extra)


def announce_core(conn: Connection, pending: list, event_id: int, kind: str, **extra) -> None:
    """`announce` in a Core transaction (`Database.write_core`): NOTIFY on PostgreSQL (sent on commit); on
    SQLite a note in the transaction, and the message waits in `pending` until the caller has committed and
    calls `dispatch_pending` (this process's streams at once; the others' pollers read the note)."""
    from flask import current_app, has_app_context

    if not has_app_context():
        return
    hub = hub_for(current_app)
    payload = json.dumps({"event": event_id, "kind": kind, **extra}, ensure_ascii=False)
    if hub.is_postgres:
        conn.execute(_NOTIFY, {"c": hub.channel, "p": payload})
    else:
        hub.note(conn, payload)
        pending.append(payload)


def notify_channel() -> str | None:
    """The running app's NOTIFY channel on PostgreSQL (for a statement that sends its own NOTIFY), else None
    (SQLite, or outside an app)."""
    from flask import current_app, has_app_context

    if not has_app_context():
        return None
    hub = hub_for(current_app)
    return hub.channel if hub.is_postgres else None


def dispatch_pending(pending: list) -> None:
    """After commit: hand what `announce_core` kept (SQLite) to this process's streams."""
    from flask import current_app, has_app_context

    if pending and has_app_context():
        hub = hub_for(current_app)
        for payload in pending:
            hub.dispatch(payload)


def note_status(
    db: Session | Connection,
    event_id: int,
    actor: Staff,
    player_id: int,
    before: bool,
    after: bool,
    cause: str,
    penalty_id: int | None,
    pending: list | None = None,
) -> int | None:
    """A notice for the head judge when a change (a record, a void, a decision) removes the player or brings
    them back, written in the same transaction as the change: in an ORM session, or in a Core transaction
    (`Database.write_core`, its announcements kept in `pending`, see `announce_core`). Returns the notice's
    id, or None (no change)."""
    from .models import Notice

    if before == after:
        return None
    conn = db.connection() if isinstance(db, Session) else db
    nid = conn.execute(
        insert(Notice.__table__).returning(Notice.__table__.c.id),
        {
            "event_id": event_id,
            "player_id": player_id,
            "change": "removed" if after else "restored",
            "cause": cause,
            "penalty_id": penalty_id,
            "by_id": actor.id,
            "created_at": utcnow(),
        },
    ).scalar_one()
    if isinstance(db, Session):
        announce(db, event_id, "notice", notice=nid)
    else:
        announce_core(db, [] if pending is None else pending, event_id, "notice", notice=nid)
    return nid


def _forget(session: Session) -> None:
    session.info.pop("judgeapp.live", None)


def hub_for(app: Flask) -> Hub:
    """The app's hub (made once, with the app's database URL)."""
    hub = app.extensions.get("judgeapp.live")
    if hub is None:
        hub = app.extensions["judgeapp.live"] = Hub(
            app.config["DATABASE_URL"], int(app.config.get("LIVE_MAX_STREAMS", MAX_STREAMS))
        )
    return hub
