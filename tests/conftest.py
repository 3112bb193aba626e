"""Shared fixtures: one search index per test run, an app per test, a client, a CLI runner, a browser."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from judgeapp import ROOT, create_app

SEEDS_DIR = Path(os.environ.get("JUDGEAPP_SEEDS", ROOT.parent / "shared" / "seeds"))
CASES_DIR = Path(__file__).parent / "cases"
CHROMIUM_CANDIDATES = [os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"]


def load_cases(name: str):
    return yaml.safe_load((CASES_DIR / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory) -> Path:
    """Built once for the whole run by the first app (the corpus does not change during tests)."""
    return tmp_path_factory.mktemp("search") / "index"


@pytest.fixture
def app(index_dir, tmp_path):
    return create_app({"TESTING": True, "SECRET_KEY": "test", "INDEX_DIR": str(index_dir),
                       "SITUATION_INDEX_DIR": str(index_dir.with_name("situations"))})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def library(app):
    return app.extensions["judgeapp.library"]


@pytest.fixture
def broken_corpus(tmp_path) -> Path:
    """A writable copy of the real corpus, for tests that break it on purpose."""
    target = tmp_path / "rules_corpus"
    shutil.copytree(ROOT / "rules_corpus", target)
    return target


@pytest.fixture
def broken_infractions(tmp_path) -> Path:
    """A writable copy of the real infraction data, for tests that break it on purpose."""
    target = tmp_path / "infractions"
    shutil.copytree(ROOT / "infractions", target)
    return target


def _chromium_path() -> str | None:
    return next((p for p in CHROMIUM_CANDIDATES if p and Path(p).exists()), None)


@pytest.fixture(scope="session")
def chromium():
    """A real headless Chromium (Debian's package) driven by Playwright.

    Skipped with the reason on a machine without it; required when CI=true (.ci/run installs it).
    """
    path = _chromium_path()
    required = os.environ.get("CI", "").lower() == "true"
    if path is None:
        msg = "no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)"
        pytest.fail(msg + " — required on CI") if required else pytest.skip(msg)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        msg = "the playwright package is not installed (pip install -e '.[test]')"
        pytest.fail(msg) if required else pytest.skip(msg)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=path, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                  "--no-first-run", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )
        yield browser
        browser.close()


@pytest.fixture
def live_server(app):
    """The app served on a free local port for the browser."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture
def phone(chromium):
    """A phone-size page (390×844, touch)."""
    context = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                   locale="ja-JP")
    page = context.new_page()
    yield page
    context.close()
