"""Recording speed beside a raw-driver baseline, in one run (issue 11 point 7).

Baseline: the same transaction the app makes, written straight with the driver — lock and bump a per-player
counter, insert the record, insert its audit row, commit — with psycopg and sqlite3 directly, 10 threads,
5 players. App: 10 judges recording at once over HTTP under the deploy's gunicorn (docs/deploy.md), sent by
`wrk` (bench/record.lua: one thread and keep-alive connection per judge) where it is installed, else by
Python threads (`python` as the second argument chooses them): on the 2 shared cores the client's own CPU
per request counts, and wrk's is about a quarter of the threads' (the table says which ran, and its CPU).

    .venv/bin/python bench/record_bench.py [records_per_thread] [wrk|python]
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load_bench  # noqa: E402

THREADS, PLAYERS = 10, 5


def _threads(fn, per: int) -> tuple[float, list[float]]:
    lat: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(THREADS)

    def work(j: int):
        conn = fn("connect")
        barrier.wait()
        for i in range(per):
            t = time.perf_counter()
            fn("record", conn, (j * per + i) % PLAYERS + 1)
            with lock:
                lat.append((time.perf_counter() - t) * 1000)
        conn.close()

    ts = [threading.Thread(target=work, args=(j,)) for j in range(THREADS)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, lat


SCHEMA = [
    "CREATE TABLE players (id INTEGER PRIMARY KEY, penalty_count INTEGER NOT NULL DEFAULT 0)",
    "CREATE TABLE penalties (id {serial} PRIMARY KEY, player_id INTEGER NOT NULL, seq INTEGER NOT NULL, "
    "level TEXT NOT NULL, facts TEXT NOT NULL, UNIQUE (player_id, seq))",
    "CREATE TABLE audit (id {serial} PRIMARY KEY, target TEXT NOT NULL, detail TEXT NOT NULL)",
]


def sqlite_baseline(path: Path, per: int) -> dict:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for stmt in SCHEMA:
        conn.execute(stmt.format(serial="INTEGER"))
    conn.executemany("INSERT INTO players (id) VALUES (?)", [(i,) for i in range(1, PLAYERS + 1)])
    conn.close()

    def fn(op, c=None, pid=None):
        if op == "connect":
            c = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            c.execute("PRAGMA synchronous=FULL")
            c.execute("PRAGMA busy_timeout=30000")
            return c
        c.execute("BEGIN IMMEDIATE")
        seq = c.execute(
            "UPDATE players SET penalty_count = penalty_count + 1 WHERE id = ? RETURNING penalty_count",
            (pid,),
        ).fetchone()[0]
        rid = c.execute(
            "INSERT INTO penalties (player_id, seq, level, facts) VALUES (?, ?, 'caution', '同時記録')",
            (pid, seq),
        ).lastrowid
        c.execute("INSERT INTO audit (target, detail) VALUES (?, '{}')", (f"penalty:{rid}",))
        c.execute("COMMIT")

    wall, lat = _threads(fn, per)
    return _figures(wall, lat)


def pg_baseline(url: str, per: int) -> dict:
    import psycopg

    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP SCHEMA IF EXISTS rawbench CASCADE")
        c.execute("CREATE SCHEMA rawbench")
        c.execute("SET search_path TO rawbench")
        for stmt in SCHEMA:
            c.execute(stmt.format(serial="SERIAL"))
        c.execute("INSERT INTO players (id) SELECT generate_series(1, %s)", (PLAYERS,))

    def fn(op, c=None, pid=None):
        if op == "connect":
            c = psycopg.connect(dsn, options="-csearch_path=rawbench")
            return c
        with c.transaction():
            seq = c.execute(
                "UPDATE players SET penalty_count = penalty_count + 1 WHERE id = %s RETURNING penalty_count",
                (pid,),
            ).fetchone()[0]
            rid = c.execute(
                "INSERT INTO penalties (player_id, seq, level, facts) VALUES (%s, %s, 'caution', "
                "'同時記録') RETURNING id",
                (pid, seq),
            ).fetchone()[0]
            c.execute("INSERT INTO audit (target, detail) VALUES (%s, '{}')", (f"penalty:{rid}",))

    try:
        wall, lat = _threads(fn, per)
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("DROP SCHEMA IF EXISTS rawbench CASCADE")
    return _figures(wall, lat)


def _load() -> str:
    """The 1-minute load average (the machine is shared: other work slows both sides of the ratio)."""
    return f"{os.getloadavg()[0]:.1f}"


def _figures(wall: float, lat: list[float]) -> dict:
    return {
        "records": len(lat),
        "rps": len(lat) / wall,
        "p50": load_bench.percentile(lat, 50),
        "p99": load_bench.percentile(lat, 99),
    }


def run(per: int = 80, client: str | None = None) -> list[str]:
    client = client or ("wrk" if load_bench.WRK else "python")
    before = _load()
    work = Path(tempfile.mkdtemp(prefix="judgeapp-rec-"))
    index_dir = work / "instance"
    lines = [
        f"### Recording beside the raw driver ({THREADS} threads, {per} records each, {PLAYERS} players)",
        "",
        "| database | raw records/s | raw p99 ms | app records/s (gunicorn) | app p50 ms | app p99 ms | "
        "app / raw | failures | standings = sequential | client | client CPU ms/record | "
        "workers CPU ms/record | PostgreSQL backends CPU ms/record |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    try:
        for name, url in (
            ("SQLite (WAL)", f"sqlite:///{work / 'rec.db'}"),
            ("PostgreSQL", load_bench.postgres_url()),
        ):
            if url is None:
                lines.append(f"| {name} | not reachable | | | | | | | | | | | |")
                continue
            raw = sqlite_baseline(work / "raw.db", per) if url.startswith("sqlite") else pg_baseline(url, per)
            load_bench.migrate(url)
            srv = load_bench.Server("gunicorn", work, url, index_dir)
            try:
                srv.start()
                app = load_bench.recording(
                    srv.port, judges=THREADS, per_judge=per, players=PLAYERS, client=client, server=srv
                )
            finally:
                srv.stop()
            db_cpu = f"{app['db_cpu_ms']:.2f}" if url.startswith("postgresql") else "–"
            lines.append(
                f"| {name} | {raw['rps']:.0f} | {raw['p99']:.1f} | {app['rps']:.0f} | {app['p50']:.1f} | "
                f"{app['p99']:.1f} | {app['rps'] / raw['rps']:.0%} | {app['failures']} | "
                f"{'yes' if app['standings_equal'] else 'NO'} | {client} | {app['client_cpu_ms']:.2f} | "
                f"{app['worker_cpu_ms']:.2f} | {db_cpu} |"
            )
            print(lines[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines += [
        "",
        f"cores: {os.cpu_count()}; command: `.venv/bin/python bench/record_bench.py {per} {client}`; "
        f"load average before/after: {before} / {_load()}",
        "",
    ]
    return lines


if __name__ == "__main__":
    print(
        "\n".join(
            run(int(sys.argv[1]) if len(sys.argv) > 1 else 80, sys.argv[2] if len(sys.argv) > 2 else None)
        )
    )
