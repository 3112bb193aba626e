"""JSON endpoints for games, search and sections. Field names are a contract: add, never rename."""

from __future__ import annotations

from flask import jsonify, request

from ..errors import JudgeappError
from ..library import current_library
from . import bp


@bp.get("/games")
def games():
    """Every game with its documents."""
    corpus = current_library().corpus
    return jsonify([
        {
            "id": g.id,
            "name": g.name,
            "documents": [
                {"id": d.id, "title": d.title, "url": d.url, "status": d.meta.status,
                 "defects": d.meta.defects}
                for d in g.documents
            ],
            "policy": None,
        }
        for g in corpus.games.values()
    ])


@bp.get("/search")
def search():
    """Full-text search; `game` optional (all games when absent), `limit` 1–100 (default 10)."""
    lib = current_library()
    q = request.args.get("q", "")
    game = request.args.get("game") or None
    if game is not None and game not in lib.corpus.games:
        raise JudgeappError(f"ゲーム「{game[:40]}」はありません。/api/games の id を指定してください。",
                            404, "unknown_game")
    raw_limit = request.args.get("limit", "10")
    try:
        limit = int(raw_limit)
    except ValueError:
        raise JudgeappError("limit は 1 から 100 の整数で指定してください。", 400, "bad_limit") from None
    if not 1 <= limit <= 100:
        raise JudgeappError("limit は 1 から 100 の整数で指定してください。", 400, "bad_limit")
    results = lib.index.search(q, game=game, limit=limit) if q.strip() else None
    return jsonify({
        "query": results.query if results else q.strip(),
        "total": results.total if results else 0,
        "results": [
            {"id": h.id, "game": h.game, "doc": h.doc, "title": h.title, "doc_title": h.doc_title,
             "url": h.url, "snippet": h.snippet, "score": h.score}
            for h in (results.hits if results else [])
        ],
    })


@bp.get("/sections/<path:section_id>")
def section(section_id: str):
    """One section's own plain text (without its sub-sections)."""
    corpus = current_library().corpus
    sec = corpus.section(section_id)
    if sec is None:
        raise JudgeappError(f"セクション「{section_id[:80]}」はありません。", 404, "unknown_section")
    return jsonify({
        "id": sec.id, "game": sec.game, "doc": sec.doc, "title": sec.title, "url": sec.url,
        "text": sec.text, "parent": sec.parent, "children": sec.children,
    })
