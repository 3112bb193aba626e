"""JSON endpoints for games, search, sections, infractions and policies. Field names are a contract: add,
never rename."""

from __future__ import annotations

from flask import jsonify, request, url_for

from ..decks import check as check_deck
from ..decks import report_json
from ..errors import JudgeappError
from ..library import current_library
from ..lookup import infraction_fields, match_json
from ..policy import Policy, standing, standing_json
from . import bp

MAX_PENALTIES = 200


def _limit(default: int = 10) -> int:
    raw_limit = request.args.get("limit", str(default))
    try:
        limit = int(raw_limit)
    except ValueError:
        raise JudgeappError("limit は 1 から 100 の整数で指定してください。", 400, "bad_limit") from None
    if not 1 <= limit <= 100:
        raise JudgeappError("limit は 1 から 100 の整数で指定してください。", 400, "bad_limit")
    return limit


def _game_arg(required: bool = False) -> str | None:
    game = request.args.get("game") or None
    if game is None and required:
        raise JudgeappError("game を指定してください（/api/games の id）。", 400, "missing_game")
    if game is not None and game not in current_library().corpus.games:
        raise JudgeappError(
            f"ゲーム「{game[:40]}」はありません。/api/games の id を指定してください。", 404, "unknown_game"
        )
    return game


def _policy(game: str) -> Policy:
    lib = current_library()
    policy = lib.policies.get(game) if lib.policies else None
    if policy is None:
        raise JudgeappError(
            f"ゲーム「{game[:40]}」の違反規定はありません。/api/games の id を指定してください。",
            404,
            "unknown_game",
        )
    return policy


def infraction_json(policy: Policy, inf, score: float | None = None) -> dict:
    """An infraction's fields (judgeapp.lookup.infraction_fields), with the outcome page's URL."""
    out = {
        **infraction_fields(policy, inf),
        "url": url_for("wizard.outcome", game=policy.game, infraction_id=inf.id),
    }
    if score is not None:
        out["score"] = score
    return out


@bp.get("/games")
def games():
    """Every game with its documents."""
    corpus = current_library().corpus
    policies = current_library().policies
    return jsonify(
        [
            {
                "id": g.id,
                "name": g.name,
                "documents": [
                    {
                        "id": d.id,
                        "title": d.title,
                        "url": d.url,
                        "status": d.meta.status,
                        "defects": d.meta.defects,
                    }
                    for d in g.documents
                ],
                "policy": policies.games[g.id].name if policies and g.id in policies.games else None,
            }
            for g in corpus.games.values()
        ]
    )


@bp.get("/search")
def search():
    """Full-text search; `game` optional (all games when absent), `limit` 1–100 (default 10)."""
    lib = current_library()
    q = request.args.get("q", "")
    game = _game_arg()
    limit = _limit()
    results = lib.index.search(q, game=game, limit=limit) if q.strip() else None
    body = {
        "query": results.query if results else q.strip(),
        "total": results.total if results else 0,
        "results": [
            {
                "id": h.id,
                "game": h.game,
                "doc": h.doc,
                "title": h.title,
                "doc_title": h.doc_title,
                "url": h.url,
                "snippet": h.snippet,
                "score": h.score,
            }
            for h in (results.hits if results else [])
        ],
    }
    if results is not None and results.named:  # the games the query names, whose sections come first
        body["named"] = [{"name": n.name, "game": n.game, "found": n.found} for n in results.named]
    return jsonify(body)


@bp.get("/sections/<path:section_id>")
def section(section_id: str):
    """One section's own plain text (without its sub-sections)."""
    corpus = current_library().corpus
    sec = corpus.section(section_id)
    if sec is None:
        raise JudgeappError(f"セクション「{section_id[:80]}」はありません。", 404, "unknown_section")
    return jsonify(
        {
            "id": sec.id,
            "game": sec.game,
            "doc": sec.doc,
            "title": sec.title,
            "url": sec.url,
            "text": sec.text,
            "parent": sec.parent,
            "children": sec.children,
        }
    )


@bp.get("/infractions")
def infractions():
    """Situations matched by free text, best first (`q`, judgeapp/lookup.py): an infraction, or a section that
    decides no penalty (`kind: section`, `penalty: null`); `none: true` with a `message` when nothing in the
    text fits. Without `q`, every infraction of the game(s)."""
    lib = current_library()
    game = _game_arg()
    limit = _limit()
    q = request.args.get("q", "").strip()
    if q:
        found = lib.lookup.search(q, game=game, limit=limit)
        out = [match_json(m) for m in found.matches]
        body = {"query": found.query, "total": len(out), "results": out}
        if found.none:
            body.update(none=True, message=found.message)
        return jsonify(body)
    games = [game] if game else list(lib.policies.games)
    out = [
        infraction_json(p, inf) for g in games if (p := lib.policies.get(g)) for inf in p.infractions.values()
    ]
    return jsonify({"query": "", "total": len(out), "results": out})


@bp.get("/infractions/<game>/<infraction_id>")
def infraction(game: str, infraction_id: str):
    policy = _policy(game)
    inf = policy.infractions.get(infraction_id)
    if inf is None:
        raise JudgeappError(
            f"違反「{infraction_id[:60]}」は{policy.name}にありません。", 404, "unknown_infraction"
        )
    return jsonify(infraction_json(policy, inf))


@bp.get("/policies/<game>")
def policy(game: str):
    """A game's levels, consequences and accumulation rules, as its text has them."""
    p = _policy(game)
    return jsonify(
        {
            "game": p.game,
            "name": p.name,
            "ladder": p.file.ladder,
            "summary": p.file.summary,
            "gaps": p.file.gaps,
            "levels": [
                {
                    "id": lv.id,
                    "label": lv.label,
                    "mark": lv.mark,
                    "description": lv.description,
                    "removes": lv.removes,
                    "ends_game": lv.ends_game,
                    "restricted_to": lv.restricted_to,
                    "grant": lv.grant,
                    "citations": [c.section for c in lv.citations],
                }
                for lv in p.levels.values()
            ],
            "consequences": [
                {
                    "id": c.id,
                    "label": c.label,
                    "description": c.description,
                    "removes": c.removes,
                    "result": c.result,
                    "may": c.may,
                    "citations": [x.section for x in c.citations],
                }
                for c in p.consequences.values()
            ],
            "rules": [
                {
                    "id": r.id,
                    "kind": r.kind,
                    "level": r.level,
                    "count": r.count,
                    "to": r.to,
                    "to_any": r.to_any,
                    "automatic": r.automatic,
                    "text": r.text,
                    "citations": [c.section for c in r.citations],
                }
                for r in p.file.rules
            ],
            "infractions": len(p.infractions),
        }
    )


@bp.post("/policies/<game>/standing")
def policy_standing(game: str):
    """What a list of penalties comes to under the game's rules, step by step."""
    p = _policy(game)
    data = request.get_json(silent=True)
    if not isinstance(data, dict) or not isinstance(data.get("penalties"), list):
        raise JudgeappError('JSON で {"penalties": ["注意", "警告"]} の形で送ってください。', 400, "bad_json")
    penalties = data["penalties"]
    if len(penalties) > MAX_PENALTIES:
        raise JudgeappError(f"penalties は {MAX_PENALTIES} 件までです。", 400, "too_many")
    if not all(isinstance(x, str) for x in penalties):
        raise JudgeappError(
            "penalties の各要素はペナルティの名前（文字列）で指定してください。", 400, "bad_penalty"
        )
    result = standing(p, penalties)  # a StandingError answers 400 unknown_penalty by itself
    return jsonify(standing_json(result))


@bp.post("/decks/check")
def deck_check():
    """A deck list (one `count name` a line; `# 超次元` starts a zone) against the game's construction rules."""
    lib = current_library()
    data = request.get_json(silent=True)
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("game"), str)
        or not isinstance(data.get("deck"), str)
    ):
        raise JudgeappError(
            'JSON で {"game": "dm-senshu", "deck": "4 カード名\\n..."} の形で送ってください。',
            400,
            "bad_json",
        )
    rules = lib.decks.get(data["game"])
    if rules is None:
        raise JudgeappError(
            f"ゲーム「{data['game'][:40]}」のデッキの規定はありません。/api/games の id を指定してください。",
            404,
            "unknown_game",
        )
    report = check_deck(rules, data["deck"])  # a DeckError answers 400 bad_deck by itself
    return jsonify(
        report_json(report, lambda iid: url_for("wizard.outcome", game=rules.game, infraction_id=iid))
    )
