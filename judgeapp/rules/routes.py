"""Pages a judge reads: home (which game, search), a game, a document, a section, search results."""

from __future__ import annotations

from flask import abort, make_response, render_template, request

from ..corpus import render_section_html
from ..library import current_library
from . import bp

GAME_COOKIE = "game"
ONE_YEAR = 365 * 24 * 3600


def chosen_game() -> str | None:
    """The game a judge chose last (remembered in a cookie), if it still exists."""
    game = request.cookies.get(GAME_COOKIE)
    return game if game in current_library().corpus.games else None


def remember_game(response, game: str | None):
    if game:
        response.set_cookie(GAME_COOKIE, game, max_age=ONE_YEAR, samesite="Lax", httponly=True)
    return response


def search_params() -> tuple[str, str | None, int]:
    """The query, the game filter and the limit, from the query string; unknown games mean all games."""
    q = request.args.get("q", "")
    game = request.args.get("game") or None
    if game not in current_library().corpus.games:
        game = None
    try:
        limit = int(request.args.get("limit", 10))
    except ValueError:
        limit = 10
    return q, game, max(1, min(limit, 20))  # a phone page: 20 results at most (30 KB)


@bp.get("/")
def home():
    """Which game? And search at once."""
    corpus = current_library().corpus
    policies = current_library().policies
    return render_template(
        "rules/home.html",
        games=corpus.games.values(),
        game=chosen_game(),
        policies=policies.games if policies else {},
    )


@bp.get("/rules/<game_id>")
def game(game_id: str):
    """A game's documents and their top-level sections."""
    corpus = current_library().corpus
    game = corpus.games.get(game_id) or abort(404)
    resp = make_response(render_template("rules/game.html", game=game, corpus=corpus))
    return remember_game(resp, game.id)


@bp.get("/rules/<game_id>/<doc_id>")
def document(game_id: str, doc_id: str):
    """A document with its table of contents and what the source is known to get wrong."""
    corpus = current_library().corpus
    doc = corpus.documents.get(f"{game_id}/{doc_id}") or abort(404)
    return render_template("rules/document.html", doc=doc, game=corpus.games[game_id], corpus=corpus)


@bp.get("/rules/<game_id>/<doc_id>/<path:anchor>")
def section(game_id: str, doc_id: str, anchor: str):
    """One section: breadcrumbs, text, sub-sections, neighbours and a link to copy."""
    corpus = current_library().corpus
    sec = corpus.section(f"{game_id}/{doc_id}/{anchor}") or abort(404)
    prev_s, next_s = corpus.neighbours(sec)
    resp = make_response(
        render_template(
            "rules/section.html",
            section=sec,
            corpus=corpus,
            doc=corpus.documents[f"{game_id}/{doc_id}"],
            game=corpus.games[game_id],
            ancestors=corpus.ancestors(sec),
            children=[corpus.sections[c] for c in sec.children],
            body=render_section_html(corpus, sec),
            prev_section=prev_s,
            next_section=next_s,
            permalink=request.url_root.rstrip("/") + sec.url,
            query=request.args.get("q", ""),
        )
    )
    return remember_game(resp, game_id)


@bp.get("/search")
def search():
    """Results for the chosen game; when it has none, say so and show the other games' hits."""
    lib = current_library()
    q, game, limit = search_params()
    results = lib.index.search(q, game=game, limit=limit) if q.strip() else None
    elsewhere = None
    if results is not None and not results.hits and game:
        elsewhere = lib.index.search(q, game=None, limit=limit)
    resp = make_response(
        render_template(
            "rules/search.html",
            q=q,
            game=game,
            results=results,
            elsewhere=elsewhere,
            games=lib.corpus.games,
        )
    )
    if "game" in request.args:
        remember_game(resp, game)
        if not game:
            resp.delete_cookie(GAME_COOKIE)
    return resp
