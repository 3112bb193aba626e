"""The deploy's gunicorn settings (judgeapp/gunicorn_conf.py, docs/deploy.md) and the bench running exactly them."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _settings() -> dict:
    from judgeapp import gunicorn_conf

    return vars(gunicorn_conf)


def test_gunicorn_conf_is_the_threaded_worker_per_core():
    ns = _settings()
    assert ns["worker_class"] == "gthread" and ns["threads"] >= 8 and ns["workers"] >= 1
    assert "gunicorn -c python:judgeapp.gunicorn_conf" in (ROOT / "docs" / "deploy.md").read_text()


def test_a_worker_freezes_what_the_app_loaded():
    ns = _settings()
    try:
        ns["post_worker_init"](None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_bench_starts_gunicorn_with_the_deploy_file(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import load_bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    srv = load_bench.Server("gunicorn", tmp_path, "sqlite://", tmp_path)
    assert srv.cmd[1:3] == ["-c", "python:judgeapp.gunicorn_conf"]


def test_the_bench_measures_judgeapp_serve_itself_and_waitress_in_one_process(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import load_bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    serve = load_bench.Server("serve", tmp_path, "sqlite://", tmp_path).cmd
    waitress = load_bench.Server("waitress", tmp_path, "sqlite://", tmp_path).cmd
    assert serve[1:4] == ["-m", "judgeapp.cli", "serve"] and "--workers" not in serve
    assert waitress[:5] == serve[:5] and waitress[6:] == ["--workers", "1"]  # [5]: the port


def test_without_fcntl_as_on_windows_sqlite_records_are_written(index_dir, tmp_path, monkeypatch):
    """Windows has no fcntl (and no fork: `judgeapp serve` runs waitress in one process): the writers of the
    process queue on the threads' lock alone, and recording works."""
    from .conftest import make_app
    from .test_events import add_player, add_staff, make_event, record

    monkeypatch.setitem(sys.modules, "fcntl", None)  # `import fcntl` raises ImportError
    app = make_app(index_dir, f"sqlite:///{tmp_path / 'judgeapp.db'}")
    try:
        org = make_event(app.test_client())
        fj = add_staff(org, "FJ", "floor_judge")
        assert record(fj, add_player(org), "W").status_code == 201
    finally:
        app.extensions["judgeapp.db"].dispose()
