"""The desk, live, across processes: on PostgreSQL two real servers, a change made through one reaching a desk
streaming from the other (LISTEN/NOTIFY) within 2 s, and the desk's fragment from that process showing it; on
SQLite two apps on one file (two hubs, as two processes have), each hearing the other's notes once and only
what committed, and `judgeapp serve --workers 2` whose streams hear every record whichever worker has them."""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from judgeapp.events import live
from judgeapp.events.live import hub_for

from .conftest import CORPUS_DIRS, INFRACTIONS_DIRS, make_app, postgres_url
from .test_events import EVENT, Api, add_player, add_staff, make_event, record

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`judgeapp serve` in a process of its own on a loopback port (its processes: `workers`, one per core by
    default), on the test run's indexes (the same data as the test apps: nothing is built again)."""

    def __init__(self, url: str, index_dir: Path, log: Path, workers: int | None = None):
        self.port = _free_port()
        self.log_path = log
        self._log = log.open("wb")
        env = {
            **os.environ,
            "JUDGEAPP_DATABASE_URL": url,
            "JUDGEAPP_SECRET_KEY": "live-test",
            "JUDGEAPP_INDEX_DIR": str(index_dir),
            "JUDGEAPP_SITUATION_INDEX_DIR": str(index_dir.with_name("situations")),
            "JUDGEAPP_EXTRA_CORPUS_DIRS": json.dumps([str(d) for d in CORPUS_DIRS[1:]]),
            "JUDGEAPP_EXTRA_INFRACTIONS_DIRS": json.dumps([str(d) for d in INFRACTIONS_DIRS[1:]]),
            "JUDGEAPP_LIVE_STREAM_SECONDS": "30",
        }
        args = ["--workers", str(workers)] if workers else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "judgeapp.cli", "serve", "--port", str(self.port), *args],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )

    def wait(self, timeout: float = 90) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(self.log_path.read_text(errors="replace")[-2000:])
            try:
                if self.call("GET", "/events")[0] == 200:
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError("server did not start")

    def call(self, method: str, path: str, body=None, token: str | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        ctype = resp.getheader("Content-Type", "")
        return resp.status, (json.loads(data) if "json" in ctype else data.decode())

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)  # Ctrl+C
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._log.close()


def _stream(server: Server, path: str, token: str, out: queue.Queue, stop: threading.Event) -> None:
    """Read the event stream line by line; each complete event goes to `out` as (name, data, time)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=40)
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"})
    resp = conn.getresponse()
    out.put(("status", resp.status, time.monotonic()))
    name, data = None, None
    while not stop.is_set():
        line = resp.readline()
        if not line:
            break
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and name:
            out.put((name, data, time.monotonic()))
            name, data = None, None
    conn.close()


def _next(events: queue.Queue, name: str, within: float):
    end = time.monotonic() + within
    while (left := end - time.monotonic()) > 0:
        try:
            item = events.get(timeout=left)
        except queue.Empty:
            break
        if item[0] == name:
            return item
    raise AssertionError(f"no '{name}' event within {within} s")


def _kind(events: queue.Queue, kind: str, t0: float, within: float = 2.0):
    """The next `change` of this kind (others, from the same transaction, may come first), within 2 s of t0."""
    while True:
        item = _next(events, "change", within - (time.monotonic() - t0))
        if json.loads(item[1])["kind"] == kind:
            assert item[2] - t0 < within
            return item


@pytest.fixture
def two_servers(index_dir, tmp_path):
    url = postgres_url()  # skips without PostgreSQL (required when TEST_DATABASE_URL is set)
    app = make_app(index_dir, url)  # the schema and both indexes, before either server starts
    app.extensions["judgeapp.db"].dispose()
    servers = [Server(url, index_dir, tmp_path / "a.log"), Server(url, index_dir, tmp_path / "b.log")]
    try:
        for s in servers:
            s.wait()
        yield servers
    finally:
        for s in servers:
            s.stop()


def test_the_desk_on_one_process_sees_an_appeal_and_a_removal_made_on_the_other(two_servers):
    a, b = two_servers
    status, made = b.call("POST", "/api/events", EVENT)
    assert status == 201, made
    eid, org = made["event"]["id"], made["token"]
    tokens = {}
    for name, role in (("HJ", "head_judge"), ("FJ", "floor_judge")):
        assert (
            b.call(
                "POST",
                f"/api/events/{eid}/staff",
                {"name": name, "role": role, "passcode": f"{name}-passcode-1"},
                org,
            )[0]
            == 201
        )
        status, body = b.call(
            "POST", f"/api/events/{eid}/token", {"name": name, "passcode": f"{name}-passcode-1"}
        )
        tokens[name] = body["token"]
    status, body = b.call("POST", f"/api/events/{eid}/players", {"number": "001", "name": "山田太郎"}, org)
    player = body["results"][0]["id"]

    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    reader = threading.Thread(
        target=_stream, args=(a, f"/events/{eid}/desk/stream", tokens["HJ"], events, stop), daemon=True
    )
    reader.start()
    assert _next(events, "status", 10)[1] == 200
    _next(events, "hello", 10)

    def fj(path, body):
        return b.call("POST", f"/api/events/{eid}{path}", body, tokens["FJ"])

    # A record on B: the desk streaming from A hears it.
    t0 = time.monotonic()
    status, first = fj("/penalties", {"player": player, "round": 1, "level": "W", "facts": "1 件目"})
    assert status == 201
    _kind(events, "record", t0)
    # The second 警告 removes the player (Lycee): a notice reaches A within 2 s.
    t0 = time.monotonic()
    fj("/penalties", {"player": player, "round": 2, "level": "W", "facts": "2 件目"})
    _kind(events, "notice", t0)
    # An appeal on B: within 2 s, and A's desk (what the script fetches) shows it waiting, and the notice.
    t0 = time.monotonic()
    rid = first["record"]["id"]
    assert fj(f"/penalties/{rid}/appeal", {"grounds": "見ていない"})[0] == 201
    _kind(events, "appeal", t0)
    status, html = a.call("GET", f"/events/{eid}/desk", token=tokens["HJ"])
    assert status == 200
    assert "裁定を待つ上告（1）" in html and "以後の対戦に出られなくなりました" in html
    stop.set()


# --- SQLite: the notes every process polls -----------------------------------------------------------------


@pytest.fixture
def two_apps(index_dir, tmp_path):
    """Two apps on one SQLite file, each with its own hub: what two server processes have."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    apps = [make_app(index_dir, url), make_app(index_dir, url, migrated=True)]
    yield apps
    for app in apps:
        hub_for(app).stop()
        app.extensions["judgeapp.db"].dispose()


def _kinds(q: queue.Queue, seconds: float) -> list[str]:
    """The kinds of what is in `q`, and of what arrives within `seconds`."""
    out, end = [], time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        try:
            out.append(json.loads(q.get(timeout=left) if left > 0 else q.get_nowait())["kind"])
        except queue.Empty:
            return out


def test_on_sqlite_a_change_through_one_app_reaches_the_other_apps_desk_once(two_apps):
    a, b = two_apps
    org = make_event(a.test_client())
    fj = add_staff(org, "FJ", "floor_judge")
    player = add_player(org)
    mine, theirs = hub_for(a).subscribe(org.event_id), hub_for(b).subscribe(org.event_id)
    elsewhere = hub_for(b).subscribe(org.event_id + 1000)
    rid = record(fj, player, "W").get_json()["record"]["id"]  # a Core transaction (announce_core)
    assert json.loads(mine.get_nowait()) == {
        "event": org.event_id,
        "kind": "record",
        "record": rid,
    }  # at commit
    assert fj.post(f"/penalties/{rid}/appeal", {"grounds": "見ていない"}).status_code == 201  # the ORM's
    assert _kinds(mine, 0) == ["appeal"]
    t0 = time.monotonic()
    assert _kinds(theirs, 2) == ["record", "appeal"]  # within a few polls, once each: nothing more in 2 s
    assert _kinds(mine, 0) == [] and elsewhere.empty()  # A's own notes are not handed to it again
    # And the other way: a record through B (the same judge's token) reaches A's desk, once.
    through_b = Api(b.test_client(), org.event_id, fj.token)
    assert record(through_b, player, "N").status_code == 201
    assert _kinds(theirs, 0) == ["record"]
    assert _kinds(mine, 2) == ["record"]
    assert time.monotonic() - t0 < 10


def test_on_sqlite_a_rolled_back_change_reaches_nobody(two_apps):
    a, b = two_apps
    org = make_event(a.test_client())
    eid = org.event_id
    mine, theirs = hub_for(a).subscribe(eid), hub_for(b).subscribe(eid)
    db = a.extensions["judgeapp.db"]

    def core(conn):
        live.announce_core(conn, [], eid, "record", record=1)
        raise RuntimeError("refused")

    def orm(session):
        live.announce(session, eid, "void", record=1)
        raise RuntimeError("refused")

    with a.app_context():
        for write, fn in ((db.write_core, core), (db.write, orm)):
            with pytest.raises(RuntimeError):
                write(fn)
        pending: list = []
        db.write_core(lambda conn: live.announce_core(conn, pending, eid, "round", round=2))
        live.dispatch_pending(pending)
    assert _kinds(mine, 0) == ["round"]
    assert _kinds(theirs, 2) == ["round"]


def test_a_process_tags_its_notes_with_one_origin_whichever_thread_asks_first():
    """A new worker's first writers and its poller may ask for the origin at once: they must all get the same
    one (a note tagged otherwise would come back to this process's own desks from its poller: twice)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    try:
        for _ in range(200):
            hub = live.Hub("sqlite:////nonexistent/judgeapp.db")
            start, origins = threading.Barrier(8), []

            def ask(hub=hub, start=start, origins=origins):
                start.wait()
                origins.append(hub.origin)

            threads = [threading.Thread(target=ask) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(set(origins)) == 1 and origins[0]
    finally:
        sys.setswitchinterval(interval)


def test_on_sqlite_old_notes_are_deleted_and_later_ones_still_arrive(two_apps, monkeypatch):
    from sqlalchemy import func, select

    from judgeapp.events.models import LiveNote

    monkeypatch.setattr(live, "NOTE_SECONDS", 1)
    monkeypatch.setattr(live, "PRUNE_SECONDS", 0)
    a, b = two_apps
    org = make_event(a.test_client())
    theirs = hub_for(b).subscribe(org.event_id)
    db = a.extensions["judgeapp.db"]

    def announce(kind):
        pending: list = []
        with a.app_context():
            db.write_core(lambda conn: live.announce_core(conn, pending, org.event_id, kind))

    def notes():
        with db.reader() as s:
            return s.execute(select(func.count()).select_from(LiveNote)).scalar()

    announce("round")
    assert _kinds(theirs, 0.8) == ["round"] and notes() == 1
    time.sleep(1.1)
    announce("seats")  # the writer deletes the old note in its transaction; a new id, read as the next
    assert notes() == 1  # the pollers only read: what is left is the new note
    assert _kinds(theirs, 1.5) == ["seats"]


def _signed_in(server: Server) -> tuple[int, dict, int]:
    status, made = server.call("POST", "/api/events", EVENT)
    assert status == 201, made
    eid, org = made["event"]["id"], made["token"]
    tokens = {}
    for name, role in (("HJ", "head_judge"), ("FJ", "floor_judge")):
        body = {"name": name, "role": role, "passcode": f"{name}-passcode-1"}
        assert server.call("POST", f"/api/events/{eid}/staff", body, org)[0] == 201
        body = {"name": name, "passcode": f"{name}-passcode-1"}
        tokens[name] = server.call("POST", f"/api/events/{eid}/token", body)[1]["token"]
    status, body = server.call(
        "POST", f"/api/events/{eid}/players", {"number": "001", "name": "山田太郎"}, org
    )
    return eid, tokens, body["results"][0]["id"]


def test_serve_with_two_workers_on_sqlite_every_stream_hears_every_record(index_dir, tmp_path):
    """`judgeapp serve --workers 2`: streams and records land on whichever worker takes the connection; four
    streams (on one worker or both) each hear each of three records once."""
    url = f"sqlite:///{tmp_path / 'judgeapp.db'}"
    make_app(index_dir, url).extensions["judgeapp.db"].dispose()  # the file at head (the server checks it)
    server = Server(url, index_dir, tmp_path / "serve.log", workers=2)
    stop = threading.Event()
    try:
        server.wait()
        eid, tokens, player = _signed_in(server)
        streams = []
        for _ in range(4):
            events: queue.Queue = queue.Queue()
            path = f"/events/{eid}/desk/stream"
            threading.Thread(
                target=_stream, args=(server, path, tokens["HJ"], events, stop), daemon=True
            ).start()
            assert _next(events, "status", 10)[1] == 200
            _next(events, "hello", 10)
            streams.append(events)
        made = []
        for n in range(3):
            body = {"player": player, "round": 1, "level": "N", "facts": f"{n + 1} 件目"}
            status, data = server.call("POST", f"/api/events/{eid}/penalties", body, tokens["FJ"])
            assert status == 201, data
            made.append(data["record"]["id"])
        time.sleep(1.5)  # every poller has looked several times
        for events in streams:
            heard = []
            while not events.empty():
                name, data, _ = events.get_nowait()
                if name == "change" and json.loads(data)["kind"] == "record":
                    heard.append(json.loads(data)["record"])
            assert sorted(heard) == made  # once each (its own worker's at once, the other's polled)
        # SIGTERM (a service manager's stop or restart) with the four desks open: their streams end, and the
        # server exits at once instead of after gunicorn's graceful timeout (30 s)
        t0 = time.monotonic()
        server.proc.terminate()
        server.proc.wait(20)
        assert time.monotonic() - t0 < 10
    finally:
        stop.set()
        server.stop()
    assert "Booting worker" in server.log_path.read_text()  # gunicorn's workers, not waitress
