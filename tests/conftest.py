"""Shared fixtures: one search index per test run, an app per test (one per module where the module only
reads), a client, a CLI runner, a browser.

A test that writes gets an empty database at head without running the migrations again: on SQLite a copy of a
file migrated once per run, on PostgreSQL one schema migrated once per run and emptied before each test (the
migrations themselves: tests/test_migrations.py and tests/test_event_pages.py). The test apps hash passcodes
with a cheap method (TEST_PASSCODE_HASH); the app's scrypt default is checked in tests/test_events.py."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgeapp import ROOT, create_app
from judgeapp.events.db import upgrade
from judgeapp.yamlload import load_yaml

SEEDS_DIR = Path(os.environ.get("JUDGEAPP_SEEDS", ROOT.parent / "shared" / "seeds"))
CASES_DIR = Path(__file__).parent / "cases"
# The query tables and their halves (tests/cases/tables.yaml), read as the benches read them.
sys.path.insert(0, str(ROOT / "bench"))
import tables  # noqa: E402, F401  (the tests import it from here)

# A made-up game added by data alone (docs/add-a-game.md), loaded by every test app beside the real games.
FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_SOURCES = FIXTURES / "sources"
CORPUS_DIRS = [ROOT / "rules_corpus", FIXTURES / "rules_corpus"]
INFRACTIONS_DIRS = [ROOT / "infractions", FIXTURES / "infractions"]
# The games the test app loads, read from the folders (no test says how many there are).
REAL_GAMES = sorted(p.parent.name for p in (ROOT / "rules_corpus").glob("*/_game.yaml"))
FIXTURE_GAMES = sorted(p.parent.name for p in (FIXTURES / "rules_corpus").glob("*/_game.yaml"))
GAMES = sorted(REAL_GAMES + FIXTURE_GAMES)
CHROMIUM_CANDIDATES = [os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"]


def form_post(client, url: str, data: dict, page: str | None = None, **kw):
    """Post a form as a browser does: read the page's CSRF token first."""
    import re

    html = client.get(page or url).get_data(as_text=True)
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, f"no CSRF token on {page or url}"
    return client.post(url, data={"csrf_token": m.group(1), **data}, **kw)


def load_cases(name: str):
    return load_yaml(CASES_DIR / name)


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory) -> Path:
    """Built once for the whole run by the first app (the corpus does not change during tests)."""
    return tmp_path_factory.mktemp("search") / "index"


DEFAULT_TEST_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
# werkzeug's cheap hash for staff passcodes in the test apps (the app's default is scrypt, kept by the
# subprocess servers of test_live.py and test_event_pages.py and checked by test_events.py): scrypt's
# deliberate cost was most of the time of every test that signs staff in.
TEST_PASSCODE_HASH = "pbkdf2:sha256:1000"


def _sqlite_template(index_dir: Path) -> Path:
    """An SQLite database migrated to head once per run (Alembic on an empty file): a new test database is a
    copy of it, which is what running the migrations again would write."""
    template = index_dir.parent / "migrated-template.db"
    if not template.exists():
        building = template.with_name("migrating.db")
        building.unlink(missing_ok=True)
        upgrade(f"sqlite:///{building}")
        building.rename(template)
    return template


def make_app(index_dir: Path, database_url: str, migrated: bool = False, **extra):
    """A test app on `database_url`, its schema at head: a new SQLite file is a copy of the migrated template;
    any other database is migrated with Alembic, unless the caller says it already is (`migrated`)."""
    sqlite_file = Path(database_url.split("///", 1)[1]) if database_url.startswith("sqlite:///") else None
    if sqlite_file is not None and not sqlite_file.exists():
        shutil.copyfile(_sqlite_template(index_dir), sqlite_file)
        migrated = True
    config = {
        "TESTING": True,
        "SECRET_KEY": "test",
        "INDEX_DIR": str(index_dir),
        "SITUATION_INDEX_DIR": str(index_dir.with_name("situations")),
        "DATABASE_URL": database_url,
        "EXTRA_CORPUS_DIRS": [str(d) for d in CORPUS_DIRS[1:]],
        "EXTRA_INFRACTIONS_DIRS": [str(d) for d in INFRACTIONS_DIRS[1:]],
        "PASSCODE_HASH": TEST_PASSCODE_HASH,
        **extra,
    }
    app = create_app({k: v for k, v in config.items() if v is not None})  # None: the app's default
    if not migrated:
        app.extensions["judgeapp.db"].upgrade()
    return app


_LIBRARIES: dict = {}


@pytest.fixture(scope="session", autouse=True)
def _one_library_per_data():
    """The rules library is read-only once loaded, so apps built on the same data share it (as the processes
    of one server do): each test app then costs a Flask app and its database, not a reload of the corpus and
    every citation. Other data (a broken copy) is loaded afresh; a load that fails is not kept."""
    import judgeapp.library as library_module

    real = library_module.open_library

    def shared(*args, **kwargs):
        key = repr((args, sorted(kwargs.items())))
        if key not in _LIBRARIES:
            _LIBRARIES[key] = real(*args, **kwargs)
        return _LIBRARIES[key]

    library_module.open_library = shared
    yield
    library_module.open_library = real


@pytest.fixture(scope="module")
def module_app(index_dir, tmp_path_factory):
    """One app and database for a whole module (see `app`)."""
    app = make_app(index_dir, f"sqlite:///{tmp_path_factory.mktemp('module-db') / 'judgeapp.db'}")
    yield app
    app.extensions["judgeapp.db"].dispose()


@pytest.fixture
def app(request, index_dir, tmp_path):
    """A fresh app and database for the test; a module whose tests only read says `SHARED_APP = True` and gets
    one app for all its tests (a setting a test changes is put back after it)."""
    if getattr(request.module, "SHARED_APP", False):
        app = request.getfixturevalue("module_app")
        saved = dict(app.config)
        yield app
        app.config.clear()
        app.config.update(saved)
        return
    app = make_app(index_dir, f"sqlite:///{tmp_path / 'judgeapp.db'}")
    yield app
    app.extensions["judgeapp.db"].dispose()


_PG_SCHEMAS: set = set()
PG_SCHEMA = f"judgeapp_test_{os.getpid()}"  # each run its own schemas: two runs at once do not collide
PG_MIGRATED_SCHEMA = f"{PG_SCHEMA}_m"
_PG_MIGRATED: dict = {}


def _postgres_base() -> str:
    """TEST_DATABASE_URL (required: CI sets it), else this machine's server if it answers, else skip."""
    base = os.environ.get("TEST_DATABASE_URL")
    required = bool(base)
    base = base or DEFAULT_TEST_PG
    try:
        _postgres_run(base, "SELECT 1")
    except Exception as exc:  # noqa: BLE001 — any failure to reach the server
        msg = f"PostgreSQL not reachable at {base.split('@')[-1]} ({type(exc).__name__})"
        if required:
            pytest.fail(msg + " — TEST_DATABASE_URL is set, so the PostgreSQL tests are required")
        pytest.skip(msg + "; set TEST_DATABASE_URL to run the PostgreSQL tests")
    return base


def _postgres_run(url: str, *statements: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(text(statement))
    finally:
        engine.dispose()


def _postgres_schema(base: str, schema: str) -> str:
    """A new empty schema (dropped first if there), dropped at the end of the run; its URL (search_path)."""
    import atexit

    if not _PG_SCHEMAS:
        atexit.register(
            lambda: _postgres_run(base, *(f"DROP SCHEMA IF EXISTS {s} CASCADE" for s in sorted(_PG_SCHEMAS)))
        )
    _PG_SCHEMAS.add(schema)
    _postgres_run(base, f"DROP SCHEMA IF EXISTS {schema} CASCADE", f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def postgres_url() -> str:
    """An empty schema of the tests' own on PostgreSQL (made anew for each caller), for a test that migrates it
    itself or starts servers on it. Skips without a server; required when TEST_DATABASE_URL is set."""
    return _postgres_schema(_postgres_base(), PG_SCHEMA)


def postgres_migrated_url() -> str:
    """A schema at head on PostgreSQL with every table empty: migrated once per run, then emptied for each
    caller (every row deleted, children first, and every sequence restarted: ids from 1, as in a new schema).
    DELETE rather than TRUNCATE: on a handful of rows it is several times quicker."""
    if not _PG_MIGRATED:
        import atexit

        from sqlalchemy import MetaData, create_engine

        url = _postgres_schema(_postgres_base(), PG_MIGRATED_SCHEMA)
        upgrade(url)
        engine = create_engine(url)
        atexit.register(engine.dispose)  # before the schemas are dropped (atexit runs last in, first out)
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            sequences = (
                conn.exec_driver_sql(
                    "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = current_schema()"
                )
                .scalars()
                .all()
            )
        statements = [
            f"DELETE FROM {t.name}" for t in reversed(meta.sorted_tables) if t.name != "alembic_version"
        ]
        statements += [f"ALTER SEQUENCE {name} RESTART" for name in sequences]
        _PG_MIGRATED.update(url=url, engine=engine, statements=statements)
    # A connection left over by an earlier test would block the deletes: fail then instead of hanging.
    with _PG_MIGRATED["engine"].begin() as conn:
        conn.exec_driver_sql("SET LOCAL lock_timeout = '20s'")
        for statement in _PG_MIGRATED["statements"]:
            conn.exec_driver_sql(statement)
    return _PG_MIGRATED["url"]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_app(request, index_dir, tmp_path):
    """The app on each database: SQLite always, PostgreSQL when reachable (required when TEST_DATABASE_URL is
    set). Either way the schema is at head and empty."""
    if request.param == "sqlite":
        app = make_app(index_dir, f"sqlite:///{tmp_path / 'judgeapp.db'}")
    else:
        app = make_app(index_dir, postgres_migrated_url(), migrated=True)
    yield app
    app.extensions["judgeapp.db"].dispose()


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
            executable_path=path,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
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
    context = chromium.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, locale="ja-JP"
    )
    page = context.new_page()
    yield page
    context.close()
