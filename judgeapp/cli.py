"""The `judgeapp` command: serve, index, search, check."""

from __future__ import annotations

import json
import os
import sys

import click

from . import ROOT


@click.group()
def main() -> None:
    """judgeapp: フロアルール・違反ウィザード・大会記録"""


def _default_workers() -> int:
    from . import gunicorn_conf

    return gunicorn_conf.workers  # one per core, or JUDGEAPP_WORKERS


@main.command()
@click.option("--host", default=lambda: os.environ.get("HOST", "127.0.0.1"), show_default="127.0.0.1")
@click.option("--port", default=lambda: int(os.environ.get("PORT", 8000)), type=int, show_default="8000")
@click.option(
    "--workers",
    default=_default_workers,
    type=click.IntRange(min=1),
    show_default="one per core, or JUDGEAPP_WORKERS",
    help="server processes (gunicorn); 1, or where there is no fork (Windows): waitress in this process",
)
@click.option(
    "--threads",
    default=None,
    type=click.IntRange(min=1),
    help="threads for pages per process, 8 by default (the desks' live streams get threads of their own; "
    "under gunicorn without this option, gunicorn_conf.py's threads: 32 in all)",
)
def serve(host: str, port: int, workers: int, threads: int | None) -> None:
    """Serve the app: one process per core under gunicorn (judgeapp/gunicorn_conf.py's settings), or waitress
    in one process. The schema is brought up to date and the search index built first, once.

    Each open desk holds one thread for its event stream, so a process gets `threads` plus the most streams
    it keeps open (LIVE_MAX_STREAMS, 24): open desks never take the threads the judges' pages need. The
    processes hear each other's changes for the desks through the database (judgeapp/events/live.py)."""
    import gc

    from . import create_app
    from .events.live import hub_for

    app = create_app()  # builds the search indexes if needed: once, before any worker is forked
    db = app.extensions["judgeapp.db"]
    db.upgrade()  # the schema is brought up to date before serving
    db.dispose()  # no connection of this process is left for a forked worker to share
    streams = hub_for(app).max_streams
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    ready = f"judgeapp is ready: http://{shown}:{port}/  (Ctrl+C to stop)"
    # As judgeapp/gunicorn_conf.py's post_worker_init: the loaded indexes stay out of every full collection
    # (and, frozen before the fork, their pages stay shared between the workers).
    gc.freeze()
    if workers > 1 and hasattr(os, "fork"):
        _gunicorn(app, f"{host}:{port}", workers, threads and threads + streams, ready).run()
        return
    from waitress import serve as waitress_serve

    click.echo(ready)
    waitress_serve(app, host=host, port=port, threads=(threads or 8) + streams, ident="judgeapp")


def _gunicorn(app, bind: str, workers: int, threads: int | None, ready: str):
    """gunicorn's custom application (gunicorn.app.base.BaseApplication) serving `app`, loaded in this process
    and forked into `workers` workers (preload_app: the indexes are shared copy-on-write), with the deploy's
    settings (judgeapp/gunicorn_conf.py: the threaded worker, its threads, gc.freeze in each worker)."""
    from gunicorn.app.base import BaseApplication

    from . import gunicorn_conf

    class Server(BaseApplication):
        def load_config(self):
            for key, value in vars(gunicorn_conf).items():
                if key in self.cfg.settings:
                    self.cfg.set(key, value)
            self.cfg.set("bind", bind)
            self.cfg.set("workers", workers)
            if threads:
                self.cfg.set("threads", threads)
            self.cfg.set("preload_app", True)
            self.cfg.set("when_ready", lambda _arbiter: click.echo(ready))

        def load(self):
            return app

    return Server()


@main.group()
def db() -> None:
    """The event-records database (DATABASE_URL; SQLite in the instance folder by default)."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(revision: str) -> None:
    """Apply the migrations (safe to run again: it does nothing when the schema is current)."""
    from flask import Flask

    from . import load_settings
    from .events.db import upgrade

    settings = Flask("judgeapp", instance_relative_config=True, instance_path=str(ROOT / "instance"))
    load_settings(settings)
    url = settings.config["DATABASE_URL"]
    upgrade(url, revision=revision)
    click.echo(f"database is at revision {revision}: {url.split('@')[-1]}")


@main.command()
def index() -> None:
    """Rebuild the search index from the corpus (restart running servers to use it)."""
    import time

    from flask import Flask

    from . import load_settings
    from .corpus import load_corpus
    from .library import data_dirs, index_docs
    from .search import ensure_index

    # The app's settings, without building the app (which would build the index first).
    settings = Flask("judgeapp", instance_relative_config=True, instance_path=str(ROOT / "instance"))
    load_settings(settings)
    corpus_dirs, _ = data_dirs(settings.config)
    corpus = load_corpus(corpus_dirs)
    start = time.perf_counter()
    ensure_index(lambda: index_docs(corpus), settings.config["INDEX_DIR"], corpus.version, force=True)
    click.echo(
        f"indexed {len(corpus.sections)} sections in {time.perf_counter() - start:.1f}s "
        f"→ {settings.config['INDEX_DIR']}"
    )
    # The situation lookup is built when the app starts; its cache (SITUATION_INDEX_DIR) follows the data.


@main.command()
@click.argument("query")
@click.option("--game", default=None, help="game id (all games when absent)")
@click.option("--limit", default=10, type=int, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print the API's JSON")
def search(query: str, game: str | None, limit: int, as_json: bool) -> None:
    """Search the rules from the command line."""
    from . import create_app

    app = create_app()
    with app.test_client() as client:
        resp = client.get("/api/search", query_string={"q": query, "game": game or "", "limit": limit})
    data = resp.get_json()
    if as_json or resp.status_code != 200:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        sys.exit(0 if resp.status_code == 200 else 1)
    click.echo(f"「{data['query']}」 {data['total']} 件")
    for r in data["results"]:
        click.echo(f"{r['score']:7.2f}  {r['id']}  {r['title']}")


@main.command()
@click.option(
    "--corpus",
    "corpus_dir",
    default=str(ROOT / "rules_corpus"),
    show_default=True,
    type=click.Path(file_okay=False),
)
@click.option(
    "--infractions",
    "infractions_dir",
    default=str(ROOT / "infractions"),
    show_default=True,
    type=click.Path(file_okay=False),
)
@click.option(
    "--sources",
    "sources_dir",
    default=None,
    type=click.Path(file_okay=False, exists=True),
    help="a folder of source texts (shared/seeds): compare the corpus with them, character by character",
)
@click.option(
    "--record",
    is_flag=True,
    help="with --sources: rewrite the fingerprint records (<corpus>/_sources/) from the sources",
)
def check(corpus_dir: str, infractions_dir: str, sources_dir: str | None, record: bool) -> None:
    """Validate the corpus (against its sources' fingerprints, or the sources themselves with --sources)
    and the infraction data (every citation's quote too); exit 1 listing every problem."""
    from .corpus import CorpusError, load_corpus
    from .decks import load_deck_rules
    from .policy import PolicyError, load_policies

    try:
        corpus = load_corpus(corpus_dir)
    except CorpusError as exc:
        _fail(exc.problems)
    click.echo(
        f"✓ corpus: {len(corpus.games)} games, {len(corpus.documents)} documents, "
        f"{len(corpus.sections)} sections"
    )
    if record and not sources_dir:
        _fail(["--record needs --sources DIR (the records are written from the sources themselves)"])
    _check_fidelity(corpus, sources_dir, record)
    try:
        policies = load_policies(infractions_dir, corpus)
    except PolicyError as exc:
        _fail(exc.problems)
    deck_problems: list[str] = []
    decks = load_deck_rules(infractions_dir, corpus, policies, deck_problems)
    if deck_problems:
        _fail(deck_problems)
    for d in decks.values():
        click.echo(
            f"✓ {d.game}: {len(d.file.rules)} deck rules, {len(d.listed)} listed cards match the corpus"
        )
    for p in policies.games.values():
        cites = sum(len(i.citations) for i in p.infractions.values())
        click.echo(
            f"✓ {p.game}: {len(p.infractions)} infractions ({cites} citations checked), "
            f"{len(p.nodes)} wizard nodes, depth {p.depth}, {len(p.training.scenarios)} scenarios"
        )
    missing = sorted(set(corpus.games) - set(policies.games))
    if missing:
        _fail([f"{infractions_dir}: no policy for {', '.join(missing)}"])


def _check_fidelity(corpus, sources_dir: str | None, record: bool) -> None:
    """The corpus against the recorded fingerprints; with `sources_dir`, against the sources too."""
    from pathlib import Path

    from .fidelity import (
        check_records,
        compare_sources,
        documents_by_source,
        load_records,
        make_record,
        record_path,
        write_record,
    )

    records = load_records(corpus.roots)
    if record:
        problems: list[str] = []
        for source in sorted(documents_by_source(corpus)):
            path = Path(sources_dir) / source
            if not path.exists():
                problems.append(f"{source}: not in {sources_dir}")
                continue
            rec, missing = make_record(corpus, source, path.read_text(encoding="utf-8"), records.get(source))
            problems += missing
            if not missing:
                write_record(record_path(corpus, source), rec)
                click.echo(f"✓ recorded {record_path(corpus, source)}")
        if problems:
            _fail(problems)
        records = load_records(corpus.roots)
    problems = check_records(corpus, records)
    if sources_dir:
        problems += compare_sources(corpus, sources_dir, records)
    if problems:
        _fail(problems)
    pieces = sum(len(rows) for r in records.values() for rows in r["quoted"].values())
    against = f"the sources in {sources_dir}" if sources_dir else "the recorded fingerprints"
    click.echo(f"✓ fidelity: {pieces} pieces of {len(records)} sources match {against}")


def _fail(problems: list[str]) -> None:
    for p in problems:
        click.echo(f"✗ {p}", err=True)
    click.echo(f"{len(problems)} problem(s) found.", err=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
