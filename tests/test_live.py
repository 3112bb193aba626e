"""The desk, live, across two real server processes on PostgreSQL: a change made through one process reaches a
desk streaming from the other (LISTEN/NOTIFY) within 2 s, and the desk's fragment from that process shows it."""

from __future__ import annotations

import http.client
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .conftest import make_app, postgres_url
from .test_events import EVENT

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`judgeapp serve` (waitress) in a process of its own on a loopback port."""

    def __init__(self, url: str, index_dir: Path, log: Path):
        self.port = _free_port()
        self.log_path = log
        self._log = log.open("wb")
        env = {
            **os.environ,
            "JUDGEAPP_DATABASE_URL": url,
            "JUDGEAPP_SECRET_KEY": "live-test",
            "JUDGEAPP_INDEX_DIR": str(index_dir),
            "JUDGEAPP_SITUATION_INDEX_DIR": str(index_dir.with_name("situations")),
            "JUDGEAPP_LIVE_STREAM_SECONDS": "30",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "judgeapp.cli", "serve", "--port", str(self.port)],
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
        self.proc.terminate()
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
