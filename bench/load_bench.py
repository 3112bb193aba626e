"""Pages under load, recording under concurrency, and cold start: the app as it runs in production.

- load: the app under a production server (`judgeapp serve` itself, which forks a gunicorn worker per core;
  waitress in one process, as `judgeapp serve --workers 1` runs it; and gunicorn with one worker per core as
  docs/deploy.md runs it), 20 concurrent clients with keep-alive, a realistic mix of a judge's pages (home,
  search, section, wizard step, outcome, player page) for a fixed number of requests; p50/p95/p99 per page
  type, requests per second, and the transfer size of each page type.
- recording: 10 concurrent judges recording penalties for a few players over HTTP, on SQLite and on
  PostgreSQL; latency and throughput, and the check that every player's standing equals the standing of the
  same penalties recorded one by one.
- cold start: from process start to the first answered search (the index exists), and the index build time
  for the real corpus.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SEARCHES = [
    "遅刻",
    "すりーぶ",
    "引きすぎ",
    "ﾃﾞｯｷ",
    "けいこく",
    "失格",
    "スマホ",
    "プレ殿",
    "6b-iii",
    "観客 助言",
    "シャッフル",
    "時間切れ",
    "サイドボード",
    "二重スリーブ",
    "ドロップ",
    "談合",
    "デッキ 枚数",
    "ジャッジ",
]
SECTIONS = [
    "/rules/lycee/guideline/tardiness",
    "/rules/ijinden/floor-rules/ch10-2",
    "/rules/dm-senshu/floor-rules/305",
    "/rules/tcg-taikai/floor-rules/7e",
    "/rules/tcg-taikai/floor-rules/3b-i",
    "/rules/lycee/guideline/promo-cards",
]
OUTCOMES = [
    "/wizard/ijinden/extra-draw",
    "/wizard/lycee/late-seat",
    "/wizard/tcg-taikai/missing-deck-card",
    "/wizard/dm-senshu/premium-hall-card",
    "/wizard/ijinden/slow-play?prior.warning=1",
]
MIX = [
    ("home", 15),
    ("search", 30),
    ("section", 20),
    ("wizard step", 15),
    ("outcome", 10),
    ("player page", 10),
]


def _gunicorn_settings() -> str:
    from judgeapp import gunicorn_conf as ns

    return f"{ns.workers} {ns.worker_class} workers × {ns.threads} threads"


GUNICORN = _gunicorn_settings()
# The servers, by kind: `judgeapp serve` as a newcomer starts it, waitress in one process, the deploy's gunicorn.
LABELS = {
    "serve": f"`judgeapp serve` ({GUNICORN}, preloaded)",
    "waitress": "waitress in one process (`judgeapp serve --workers 1`, 8 page threads)",
    "gunicorn": f"gunicorn -c python:judgeapp.gunicorn_conf ({GUNICORN}, docs/deploy.md)",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Server:
    """The app in a subprocess, with its own instance data (database and indexes) in a temporary folder."""

    def __init__(self, kind: str, workdir: Path, database_url: str, index_dir: Path):
        self.kind, self.port = kind, free_port()
        self.env = {
            **os.environ,
            "JUDGEAPP_DATABASE_URL": database_url,
            "JUDGEAPP_SECRET_KEY": "bench",
            "JUDGEAPP_INDEX_DIR": str(index_dir / "search-index"),
            "JUDGEAPP_SITUATION_INDEX_DIR": str(index_dir / "situation-index"),
            # libpq names the app's PostgreSQL connections, so that their backends' CPU can be found
            "PGAPPNAME": f"judgeapp-bench-{self.port}",
        }
        self.database_url = database_url
        if kind in ("serve", "waitress"):
            self.cmd = [PY, "-m", "judgeapp.cli", "serve", "--port", str(self.port)]
            self.cmd += ["--workers", "1"] if kind == "waitress" else []
        else:
            # Exactly the deploy's settings (judgeapp/gunicorn_conf.py, docs/deploy.md); only the address differs.
            self.cmd = [
                str(Path(PY).with_name("gunicorn")),
                "-c",
                "python:judgeapp.gunicorn_conf",
                "-b",
                f"127.0.0.1:{self.port}",
                "judgeapp:create_app()",
            ]
        self.proc = None

    def start(self) -> float:
        """Start; the seconds until the first search is answered."""
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            self.cmd, env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/api/search?q=" + urllib.parse.quote("遅刻"))
                if conn.getresponse().status == 200:
                    return time.perf_counter() - t0
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with {self.proc.returncode}")
            if time.perf_counter() - t0 > 180:
                raise RuntimeError(f"{self.kind} did not answer within 180 s")
            time.sleep(0.05)

    def cpu(self) -> dict[tuple[str, int], float]:
        """CPU seconds (user + system, from /proc) so far of each of the server's workers ("workers": the
        processes whose parent is the one started) and, on PostgreSQL, of each backend serving its connections
        ("db")."""
        tick = os.sysconf("SC_CLK_TCK")
        procs = [("db", pid) for pid in self._backends()]
        for d in os.listdir("/proc"):
            if d.isdigit() and (_proc_stat(int(d)) or [0, 0])[1] == str(self.proc.pid):
                procs.append(("workers", int(d)))
        out = {}
        for kind, pid in procs:
            fields = _proc_stat(pid)
            if fields is not None:
                out[kind, pid] = (int(fields[11]) + int(fields[12])) / tick
        return out

    def _backends(self) -> list[int]:
        if not self.database_url.startswith("postgresql"):
            return []
        import psycopg

        with psycopg.connect(self.database_url.replace("+psycopg", ""), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (self.env["PGAPPNAME"],)
            ).fetchall()
        return [r[0] for r in rows]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # as Ctrl+C: gunicorn's quick shutdown, open streams end
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _proc_stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (state, ppid, …; utime and stime are [11] and [12])."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def cpu_delta(before: dict, after: dict, kind: str) -> float:
    """CPU seconds the processes of `kind` spent between two `Server.cpu()` readings."""
    return sum(v - before.get(k, 0.0) for k, v in after.items() if k[0] == kind)


class Client:
    """One keep-alive connection with its cookies (a judge's phone)."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        h = dict(headers or {})
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=h)
                resp = self.conn.getresponse()
                data = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                if attempt:
                    raise
        m = re.search(r"dur=([0-9.]+)", resp.headers.get("Server-Timing", ""))
        self.server_ms = float(m.group(1)) if m else float("nan")
        for value in resp.headers.get_all("Set-Cookie") or []:
            k, _, rest = value.partition("=")
            self.cookies[k] = rest.split(";", 1)[0]
        return resp.status, data

    def json(self, method: str, path: str, body=None, token: str | None = None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, data = self.request(
            method, path, json.dumps(body).encode() if body is not None else None, headers
        )
        return status, json.loads(data) if data else None

    def sign_in(self, event_id: int, name: str, passcode: str) -> None:
        _, html = self.request("GET", f"/events/{event_id}/signin")
        token = re.search(rb'name="csrf_token" value="([^"]+)"', html).group(1).decode()
        body = urllib.parse.urlencode({"csrf_token": token, "name": name, "passcode": passcode}).encode()
        status, _ = self.request(
            "POST", f"/events/{event_id}/signin", body, {"Content-Type": "application/x-www-form-urlencoded"}
        )
        assert status == 302, status


def seed_event(port: int, game: str = "lycee", players: int = 30, judges: int = 0) -> dict:
    c = Client(port)
    status, data = c.json(
        "POST",
        "/api/events",
        {
            "name": "ベンチ大会",
            "game": game,
            "date": "2026-12-01",
            "level": "competitive",
            "rounds": 8,
            "organizer": "主催",
            "passcode": "bench-passcode",
        },
    )
    assert status == 201, data
    eid, token = data["event"]["id"], data["token"]
    status, data = c.json(
        "POST",
        f"/api/events/{eid}/players",
        {"players": [{"number": f"{i:03d}", "name": f"選手{i}"} for i in range(1, players + 1)]},
        token,
    )
    assert status == 201, data
    player_ids = [p["id"] for p in data["results"]]
    tokens = []
    for j in range(judges):
        status, st = c.json(
            "POST",
            f"/api/events/{eid}/staff",
            {"name": f"J{j}", "role": "floor_judge", "passcode": "judge-passcode"},
            token,
        )
        status, tk = c.json(
            "POST", f"/api/events/{eid}/token", {"name": f"J{j}", "passcode": "judge-passcode"}
        )
        assert status == 201, tk
        tokens.append(tk["token"])
    return {"event": eid, "token": token, "players": player_ids, "judges": tokens}


def run_threads(threads: list[threading.Thread]) -> float:
    """Start them all, wait for them all; the wall-clock seconds."""
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def desk(port: int, ev: dict, stop: threading.Event, counts: list) -> None:
    """One head judge's desk as the browser keeps it: the event stream open, and the desk's fragment fetched
    again on every change (what static/desk.js does)."""
    auth = {"Authorization": f"Bearer {ev['token']}"}
    while not stop.is_set():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "GET", f"/events/{ev['event']}/desk/stream", headers={**auth, "Accept": "text/event-stream"}
        )
        resp = conn.getresponse()
        if resp.status != 200:
            counts.append(("refused", resp.status))
            resp.read()
            time.sleep(5)
            continue
        fetch = Client(port)
        while not stop.is_set():
            line = resp.readline()
            if not line:
                break
            if line.startswith(b"event: change"):
                status, _ = fetch.request("GET", f"/events/{ev['event']}/desk", headers=auth)
                counts.append(("fragment", status))
        conn.close()


def load(
    port: int,
    requests: int = 3000,
    clients: int = 20,
    seed: int = 7,
    desks: int = 0,
    record_every: float | None = None,
) -> dict:
    """The page mix by `clients` judges; beside them `desks` open desks, and (record_every) one judge recording
    a penalty every so many seconds, which every open desk hears and reloads its fragment for."""
    ev = seed_event(port)
    c = Client(port)
    for pid in ev["players"][:10]:  # some history on the player pages
        for level in ("N", "W"):
            c.json(
                "POST",
                f"/api/events/{ev['event']}/penalties",
                {"player": pid, "round": 1, "level": level, "facts": "ベンチ"},
                ev["token"],
            )
    rng = random.Random(seed)
    kinds = [k for k, w in MIX for _ in range(w)]
    plan = []
    for _ in range(requests):
        kind = rng.choice(kinds)
        if kind == "home":
            path = "/"
        elif kind == "search":
            path = (
                "/search?q="
                + urllib.parse.quote(rng.choice(SEARCHES))
                + rng.choice(["", "&game=lycee", "&game=ijinden"])
            )
        elif kind == "section":
            path = rng.choice(SECTIONS)
        elif kind == "wizard step":
            path = rng.choice(["/wizard/lycee", "/wizard/ijinden", "/wizard/tcg-taikai", "/wizard/dm-senshu"])
        elif kind == "outcome":
            path = rng.choice(OUTCOMES)
        else:
            path = f"/events/{ev['event']}/players/{rng.choice(ev['players'])}"
        plan.append((kind, path))
    times: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[float]] = defaultdict(list)
    sizes: dict[str, list[int]] = defaultdict(list)
    errors = []
    lock = threading.Lock()
    cursor = iter(plan)

    def worker():
        cl = Client(port)
        cl.sign_in(ev["event"], "主催", "bench-passcode")
        while True:
            with lock:
                item = next(cursor, None)
            if item is None:
                return
            kind, path = item
            t = time.perf_counter()
            status, data = cl.request("GET", path)
            dt = (time.perf_counter() - t) * 1000
            with lock:
                times[kind].append(dt)
                server[kind].append(cl.server_ms)
                sizes[kind].append(len(data))
                if status != 200:
                    errors.append((status, path))

    stop = threading.Event()
    desk_counts: list = []
    side = [
        threading.Thread(target=desk, args=(port, ev, stop, desk_counts), daemon=True) for _ in range(desks)
    ]

    def recorder():
        rc = Client(port)
        n = 0
        while not stop.wait(record_every):
            n += 1
            rc.json(
                "POST",
                f"/api/events/{ev['event']}/penalties",
                {"player": ev["players"][20 + n % 10], "round": 1, "level": "N", "facts": "デスク"},
                ev["token"],
            )

    if record_every:
        side.append(threading.Thread(target=recorder, daemon=True))
    for t in side:
        t.start()
    time.sleep(1.0 if desks else 0)  # the desks are open before the judges start
    wall = run_threads([threading.Thread(target=worker) for _ in range(clients)])
    stop.set()
    all_times = [x for v in times.values() for x in v]
    all_server = [x for v in server.values() for x in v]
    return {
        "server": (percentile(all_server, 50), percentile(all_server, 95), percentile(all_server, 99)),
        "server_kinds": {
            k: (percentile(v, 50), percentile(v, 95), percentile(v, 99)) for k, v in server.items()
        },
        "requests": len(all_times),
        "clients": clients,
        "rps": len(all_times) / wall,
        "errors": len(errors),
        "all": (percentile(all_times, 50), percentile(all_times, 95), percentile(all_times, 99)),
        "kinds": {
            k: (len(v), percentile(v, 50), percentile(v, 95), percentile(v, 99), max(sizes[k]))
            for k, v in times.items()
        },
        "desk_fragments": sum(1 for k, st in desk_counts if k == "fragment" and st == 200),
        "desk_refused": sum(1 for k, _ in desk_counts if k == "refused"),
    }


def desks_beside(work: Path, index_dir: Path, requests: int) -> list[str]:
    """The page benchmark with 10 desks open beside its 20 clients, against the same without them (a judge
    recording every second in both, so the desks have something to reload). Within 1.5x is the target."""
    out = {}
    for desks in (0, 10):
        url = f"sqlite:///{work / f'desks-{desks}.db'}"
        migrate(url)
        srv = Server("serve", work, url, index_dir)
        try:
            srv.start()
            out[desks] = load(srv.port, requests=requests, desks=desks, record_every=1.0)
        finally:
            srv.stop()
    a, b = out[0], out[10]
    lines = [
        "### Desks open beside the judges",
        "",
        f"{requests} page requests by 20 clients (the mix above), a judge recording a penalty every second; "
        "then the same with 10 head judge desks open (event stream, fragment reloaded on every change). "
        f"{LABELS['serve']}: the desks' streams and the recordings land on either worker, and each worker's "
        "streams hear the other's records through the database.",
        "",
        "| | requests/s | client p50 | client p95 | client p99 | server p95 | desk reloads | refused |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in (("without desks", a), ("10 desks open", b)):
        lines.append(
            f"| {name} | {r['rps']:.0f} | {r['all'][0]:.1f} | {r['all'][1]:.1f} | {r['all'][2]:.1f} | "
            f"{r['server'][1]:.1f} | {r['desk_fragments']} | {r['desk_refused']} |"
        )
    ratio = max(b["all"][1] / a["all"][1], a["rps"] / b["rps"])
    lines += [
        "",
        f"Worst ratio (client p95, and requests/s inverted): {ratio:.2f}× "
        f"({'within' if ratio <= 1.5 else 'OVER'} the 1.5× target).",
        "",
    ]
    return lines


WRK = shutil.which("wrk")


def recording(
    port: int,
    judges: int = 10,
    per_judge: int = 40,
    players: int = 5,
    client: str = "python",
    server: Server | None = None,
) -> dict:
    """`judges` judges recording at once, each on their own keep-alive connection with their own token, then
    the check that every player's standing equals the same penalties recorded one by one. The client: Python
    threads (http.client), or `wrk` (bench/record.lua: one wrk thread and connection per judge), which costs
    the shared cores far less per request; `client_cpu_ms` is the client's CPU per record either way. With
    `server`, its workers' and its PostgreSQL backends' CPU per record over the same part (`worker_cpu_ms`,
    `db_cpu_ms`)."""
    ev = seed_event(port, players=players, judges=judges)
    rng = random.Random(11)
    plans = [
        [(rng.choice(ev["players"]), rng.choice(["N", "W"])) for _ in range(per_judge)] for _ in range(judges)
    ]
    path = f"/api/events/{ev['event']}/penalties"
    cpu = server.cpu() if server else {}
    if client == "wrk":
        out = _recording_wrk(port, ev, plans, path)
    else:
        out = _recording_threads(port, ev, plans, path)
    if server:
        after = server.cpu()
        out["worker_cpu_ms"] = cpu_delta(cpu, after, "workers") / out["records"] * 1000
        out["db_cpu_ms"] = cpu_delta(cpu, after, "db") / out["records"] * 1000
    # Every player's standing equals the standing of the same penalties recorded one by one.
    c = Client(port)
    same = True
    for pid in ev["players"]:
        _, data = c.json("GET", f"/api/events/{ev['event']}/players/{pid}", token=ev["token"])
        levels = [r["level"] for r in sorted(data["records"], key=lambda r: r["seq"])]
        _, seq = c.json("POST", "/api/policies/lycee/standing", {"penalties": levels})
        given = sum(1 for plan in plans for p, _ in plan if p == pid)
        same &= data["standing"]["effective"] == seq["effective"] and len(levels) == given
        same &= [r["seq"] for r in sorted(data["records"], key=lambda r: r["seq"])] == list(
            range(1, given + 1)
        )
    return {**out, "judges": judges, "standings_equal": same, "client": client}


def _recording_threads(port: int, ev: dict, plans: list, path: str) -> dict:
    latencies: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(plans))
    failures = []

    def judge(j: int):
        c = Client(port)
        barrier.wait()
        for pid, level in plans[j]:
            t = time.perf_counter()
            status, data = c.json(
                "POST",
                path,
                {"player": pid, "round": 1, "level": level, "facts": "同時記録"},
                ev["judges"][j],
            )
            dt = (time.perf_counter() - t) * 1000
            with lock:
                latencies.append(dt)
                if status != 201:
                    failures.append((status, data))

    cpu = time.process_time()
    wall = run_threads([threading.Thread(target=judge, args=(j,)) for j in range(len(plans))])
    cpu = time.process_time() - cpu
    return {
        "records": len(latencies),
        "rps": len(latencies) / wall,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "failures": len(failures),
        "client_cpu_ms": cpu / len(latencies) * 1000,
    }


def _recording_wrk(port: int, ev: dict, plans: list, path: str) -> dict:
    """wrk with one thread and one connection per judge; each thread stops at its plan's last answer and
    writes `done <failures>`; wrk is stopped (SIGINT) once every judge is done, and prints the latencies."""
    import resource
    import signal

    judges = len(plans)
    with tempfile.NamedTemporaryFile("w", suffix=".plan", delete=False) as f:
        for j, plan in enumerate(plans):
            for pid, level in plan:
                f.write(f"{j} {ev['judges'][j]} {path} {pid} {level}\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            WRK,
            "-t",
            str(judges),
            "-c",
            str(judges),
            "-d",
            "600s",
            "--timeout",
            "60s",
            "-s",
            str(ROOT / "bench" / "record.lua"),
            f"http://127.0.0.1:{port}",
            "--",
            f.name,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    failures, done, wall, lat = 0, 0, None, None
    for line in proc.stdout:
        if line.startswith("done "):
            failures += int(line.split()[1])
            done += 1
            if done == judges:
                wall = time.perf_counter() - t0
                proc.send_signal(signal.SIGINT)
        elif line.startswith("latency "):
            lat = [int(x) for x in line.split()[1:]]
    proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.unlink(f.name)
    records = sum(len(p) for p in plans)
    if wall is None or lat is None or lat[0] != records:
        raise RuntimeError(f"wrk did not finish the plan: {done} of {judges} judges, {lat}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "records": records,
        "rps": records / wall,
        "p50": lat[1] / 1000,
        "p95": lat[2] / 1000,
        "p99": lat[3] / 1000,
        "failures": failures,
        "client_cpu_ms": cpu / records * 1000,
    }


def postgres_url() -> str | None:
    url = os.environ.get("TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    try:
        from sqlalchemy import create_engine, text

        engine = create_engine(url, connect_args={"connect_timeout": 3})
        with engine.begin() as conn:
            conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
        engine.dispose()
        return url
    except Exception:  # noqa: BLE001
        return None


def migrate(url: str) -> None:
    subprocess.run(
        [PY, "-c", f"from judgeapp.events.db import upgrade; upgrade({url!r})"], cwd=ROOT, check=True
    )


def build_index(index_dir: Path) -> None:
    subprocess.run(
        [
            PY,
            "-c",
            "from judgeapp.library import open_library; from judgeapp import ROOT; "
            f"open_library(ROOT/'rules_corpus', {str(index_dir / 'search-index')!r}, "
            "ROOT/'rules_corpus'/'synonyms.yaml', rebuild=True, infractions_dir=ROOT/'infractions', "
            f"situation_index_dir={str(index_dir / 'situation-index')!r})",
        ],
        cwd=ROOT,
        check=True,
    )


def run_desks(requests: int = 3000) -> list[str]:
    """Only the desks comparison: `.venv/bin/python bench/load_bench.py --desks [requests]`."""
    work = Path(tempfile.mkdtemp(prefix="judgeapp-desks-"))
    try:
        build_index(work / "instance")
        return desks_beside(work, work / "instance", requests)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(requests: int = 3000, pages_only: bool = False) -> list[str]:
    """Everything; with `pages_only` (`--pages`), the cold start and the pages under load alone."""
    work = Path(tempfile.mkdtemp(prefix="judgeapp-load-"))
    lines: list[str] = []
    try:
        index_dir = work / "instance"
        # Cold start: the index build for the real corpus, then process start → first answered search.
        t = time.perf_counter()
        subprocess.run(
            [
                PY,
                "-c",
                "from judgeapp.library import open_library; from judgeapp import ROOT; "
                f"open_library(ROOT/'rules_corpus', {str(index_dir / 'search-index')!r}, ROOT/'rules_corpus'/'synonyms.yaml', "
                f"rebuild=True, infractions_dir=ROOT/'infractions', situation_index_dir={str(index_dir / 'situation-index')!r})",
            ],
            cwd=ROOT,
            check=True,
        )
        build_s = time.perf_counter() - t
        sqlite_url = f"sqlite:///{work / 'bench.db'}"
        migrate(sqlite_url)
        cold = []
        for _ in range(3):
            srv = Server("serve", work, sqlite_url, index_dir)
            try:
                cold.append(srv.start())
            finally:
                srv.stop()
        lines += [
            "### Cold start",
            "",
            f"- index build for the real corpus (rules and situations, including loading the dictionary): {build_s:.1f} s",
            f"- process start → first answered search, index present (`judgeapp serve`, median of 3): {statistics.median(cold):.2f} s",
            "",
        ]
        print("\n".join(lines[-4:]), flush=True)

        lines += [
            "### Pages under load",
            "",
            f"{requests} requests by 20 concurrent keep-alive clients (signed in as staff), the mix "
            + ", ".join(f"{k} {w}%" for k, w in MIX)
            + "; times in ms. Server time is the app's own "
            "(`Server-Timing`, from the request reaching Flask to the response); client time adds the server's "
            "queue and the network stack. The load generator runs on the same 2 cores.",
            "",
        ]
        for kind in ("serve", "waitress", "gunicorn"):
            url = f"sqlite:///{work / f'load-{kind}.db'}"
            migrate(url)
            srv = Server(kind, work, url, index_dir)
            try:
                srv.start()
                r = load(srv.port, requests=requests)
            finally:
                srv.stop()
            lines += [
                f"**{LABELS[kind]}**: {r['rps']:.0f} requests/s, {r['errors']} errors; server time p50 "
                f"{r['server'][0]:.1f} / p95 {r['server'][1]:.1f} / p99 {r['server'][2]:.1f} ms; at the client "
                f"p50 {r['all'][0]:.1f} / p95 {r['all'][1]:.1f} / p99 {r['all'][2]:.1f} ms",
                "",
                "| page type | requests | server p50 | server p95 | server p99 | client p50 | client p95 | client p99 | largest page KB |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
            ]
            for k, _ in MIX:
                n, p50, p95, p99, size = r["kinds"][k]
                s50, s95, s99 = r["server_kinds"][k]
                lines.append(
                    f"| {k} | {n} | {s50:.1f} | {s95:.1f} | {s99:.1f} | {p50:.1f} | {p95:.1f} | {p99:.1f} | "
                    f"{size / 1024:.1f} |"
                )
            home, page = r["server_kinds"]["home"][1], r["server_kinds"]["player page"][1]
            lines += [
                "",
                f"Player page server p95 / home server p95: {page:.1f} / {home:.2f} ms = {page / home:.1f}× "
                f"({'within' if page <= 10 * home else 'OVER'} the 10× target).",
                "",
            ]
            print("\n".join(lines[-13:]), flush=True)
        if pages_only:
            return lines

        lines += desks_beside(work, index_dir, requests)
        print("\n".join(lines[-8:]), flush=True)

        lines += [
            "### Recording",
            "",
            "10 judges at once, 40 penalties each, over HTTP (`judgeapp serve`), for 5 players of a Lycee event.",
            "",
            "| database | records | records/s | p50 ms | p95 ms | p99 ms | failures | standings = sequential |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, url in (("SQLite (WAL)", f"sqlite:///{work / 'rec.db'}"), ("PostgreSQL", postgres_url())):
            if url is None:
                lines.append(f"| {name} | not reachable: skipped | | | | | | |")
                continue
            migrate(url)
            srv = Server("serve", work, url, index_dir)
            try:
                srv.start()
                r = recording(srv.port)
            finally:
                srv.stop()
            lines.append(
                f"| {name} | {r['records']} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p95']:.1f} | "
                f"{r['p99']:.1f} | {r['failures']} | {'yes' if r['standings_equal'] else 'NO'} |"
            )
            print(lines[-1], flush=True)
        lines.append("")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return lines


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("requests", nargs="?", type=int, default=3000, help="page requests per server (3000)")
    parser.add_argument("--pages", action="store_true", help="the cold start and the pages under load only")
    parser.add_argument("--desks", action="store_true", help="the desks beside the judges only")
    args = parser.parse_args()
    print("\n".join(run_desks(args.requests) if args.desks else run(args.requests, pages_only=args.pages)))
