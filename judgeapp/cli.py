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


@main.command()
@click.option("--host", default=lambda: os.environ.get("HOST", "127.0.0.1"), show_default="127.0.0.1")
@click.option("--port", default=lambda: int(os.environ.get("PORT", 8000)), type=int, show_default="8000")
@click.option(
    "--threads",
    default=8,
    show_default=True,
    help="worker threads for pages (the desks' live streams get threads of their own)",
)
def serve(host: str, port: int, threads: int) -> None:
    """Serve the app with waitress (builds the search index first if needed).

    Each open desk holds one thread for its event stream, so waitress gets `threads` plus the most streams a
    process keeps open (LIVE_MAX_STREAMS, 24): open desks never take the threads the judges' pages need."""
    from waitress import serve as waitress_serve

    from . import create_app
    from .events.live import hub_for

    app = create_app()
    app.extensions["judgeapp.db"].upgrade()  # the schema is brought up to date before serving
    streams = hub_for(app).max_streams
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    click.echo(f"judgeapp is ready: http://{shown}:{port}/  (Ctrl+C to stop)")
    import gc

    gc.freeze()  # as judgeapp/gunicorn_conf.py: the loaded indexes stay out of every full collection
    waitress_serve(app, host=host, port=port, threads=threads + streams, ident="judgeapp")


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
