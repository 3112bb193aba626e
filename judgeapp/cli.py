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
@click.option("--threads", default=8, show_default=True,
              help="worker threads for pages (the desks' live streams get threads of their own)")
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
    from .library import index_docs, situation_docs
    from .policy import load_policies
    from .search import ensure_index

    # The app's settings, without building the app (which would build the index first).
    settings = Flask("judgeapp", instance_relative_config=True, instance_path=str(ROOT / "instance"))
    load_settings(settings)
    corpus = load_corpus(settings.config["CORPUS_DIR"])
    start = time.perf_counter()
    ensure_index(lambda: index_docs(corpus), settings.config["INDEX_DIR"], corpus.version, force=True)
    click.echo(f"indexed {len(corpus.sections)} sections in {time.perf_counter() - start:.1f}s "
               f"→ {settings.config['INDEX_DIR']}")
    policies = load_policies(settings.config["INFRACTIONS_DIR"], corpus)
    ensure_index(lambda: situation_docs(policies), settings.config["SITUATION_INDEX_DIR"], policies.version,
                 force=True)
    click.echo(f"indexed {sum(len(p.infractions) for p in policies.games.values())} infractions "
               f"→ {settings.config['SITUATION_INDEX_DIR']}")


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
@click.option("--corpus", "corpus_dir", default=str(ROOT / "rules_corpus"), show_default=True,
              type=click.Path(file_okay=False))
@click.option("--infractions", "infractions_dir", default=str(ROOT / "infractions"), show_default=True,
              type=click.Path(file_okay=False))
def check(corpus_dir: str, infractions_dir: str) -> None:
    """Validate the corpus and the infraction data (every citation's quote too); exit 1 listing every problem."""
    from .corpus import CorpusError, load_corpus
    from .decks import load_deck_rules
    from .policy import PolicyError, load_policies

    try:
        corpus = load_corpus(corpus_dir)
    except CorpusError as exc:
        _fail(exc.problems)
    click.echo(f"✓ corpus: {len(corpus.games)} games, {len(corpus.documents)} documents, "
               f"{len(corpus.sections)} sections")
    try:
        policies = load_policies(infractions_dir, corpus)
    except PolicyError as exc:
        _fail(exc.problems)
    deck_problems: list[str] = []
    decks = load_deck_rules(infractions_dir, corpus, policies, deck_problems)
    if deck_problems:
        _fail(deck_problems)
    for d in decks.values():
        click.echo(f"✓ {d.game}: {len(d.file.rules)} deck rules, {len(d.listed)} listed cards match the corpus")
    for p in policies.games.values():
        cites = sum(len(i.citations) for i in p.infractions.values())
        click.echo(f"✓ {p.game}: {len(p.infractions)} infractions ({cites} citations checked), "
                   f"{len(p.nodes)} wizard nodes, depth {p.depth}, {len(p.training.scenarios)} scenarios")
    missing = sorted(set(corpus.games) - set(policies.games))
    if missing:
        _fail([f"{infractions_dir}: no policy for {', '.join(missing)}"])


def _fail(problems: list[str]) -> None:
    for p in problems:
        click.echo(f"✗ {p}", err=True)
    click.echo(f"{len(problems)} problem(s) found.", err=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
