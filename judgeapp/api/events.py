"""JSON endpoints for event records, authenticated per staff member (Authorization: Bearer <token>).
docs/api.md documents each with an example session."""

from __future__ import annotations

from flask import request

from ..errors import JudgeappError
from ..events import service
from ..events.auth import api_staff, current_db
from ..events.models import Appeal
from ..library import current_library
from . import bp


def _body() -> dict:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise JudgeappError("JSON オブジェクトを送ってください（Content-Type: application/json）。", 400, "bad_json")
    return data


def _policy(event_id: int):
    ev = service.get_event(current_db(), event_id)
    return ev, current_library().policies.games[ev.game]


@bp.post("/events")
def create_event():
    """A new event and its organizer; the answer holds the organizer's API token (shown once)."""
    ev, org, token = service.create_event(current_db(), current_library().policies, _body())
    return {"event": service.event_json(ev), "staff": service.staff_json(org), "token": token}, 201


@bp.post("/events/<int:event_id>/token")
def sign_in(event_id: int):
    """Sign in through the API: `{"name", "passcode"}` → a new token for that staff member (throttled)."""
    data = _body()
    service.get_event(current_db(), event_id)
    staff, token = service.token_by_passcode(current_db(), event_id, data.get("name"), data.get("passcode"))
    return {"staff": service.staff_json(staff), "token": token}, 201


@bp.patch("/events/<int:event_id>")
def update_event(event_id: int):
    """Organizer: correct the name, date, level, tier or rounds (a top cut adds rounds)."""
    actor = api_staff(event_id, "staff")
    ev = service.update_event(current_db(), current_library().policies, actor, _body())
    return service.event_json(ev)


@bp.patch("/events/<int:event_id>/staff/<int:staff_id>")
def update_staff(event_id: int, staff_id: int):
    """Organizer: `{"passcode": new}` resets a passcode; `{"active": false}` disables a member (and their token)."""
    actor = api_staff(event_id, "staff")
    return service.staff_json(service.set_staff(current_db(), actor, staff_id, _body()))


@bp.get("/events/<int:event_id>")
def event(event_id: int):
    api_staff(event_id)
    db = current_db()
    ev, policy = _policy(event_id)
    over = service.players_over_the_line(db, policy, event_id)
    return {**service.event_json(ev), "staff": [service.staff_json(s) for s in service.list_staff(db, event_id)],
            "appeals_pending": [service.record_json(v) for v in service.pending_appeals(db, event_id)],
            "players_over_the_line": [service.player_json(r.player, r) for r in over]}


@bp.post("/events/<int:event_id>/staff")
def add_staff(event_id: int):
    actor = api_staff(event_id, "staff")
    ev = service.get_event(current_db(), event_id)
    st = service.add_staff(current_db(), actor, _body(), service.grants_of(current_library().policies, ev))
    return service.staff_json(st), 201


@bp.put("/events/<int:event_id>/staff/<int:staff_id>/grants")
def set_grants(event_id: int, staff_id: int):
    actor = api_staff(event_id, "staff")
    ev = service.get_event(current_db(), event_id)
    st = service.set_grants(current_db(), actor, staff_id, _body().get("grants", []),
                            service.grants_of(current_library().policies, ev))
    return service.staff_json(st)


@bp.post("/events/<int:event_id>/staff/<int:staff_id>/token")
def token(event_id: int, staff_id: int):
    actor = api_staff(event_id)
    return {"token": service.issue_token(current_db(), actor, staff_id)}, 201


@bp.get("/events/<int:event_id>/players")
def players(event_id: int):
    api_staff(event_id)
    found = service.find_players(current_db(), event_id, request.args.get("q", ""))
    return {"results": [service.player_json(p) for p in found]}


@bp.post("/events/<int:event_id>/players")
def add_players(event_id: int):
    """One player `{"number", "name"}` or many `{"players": [{"number", "name"}, …]}` (all or nothing)."""
    actor = api_staff(event_id, "players")
    data = _body()
    rows = data.get("players") if "players" in data else [data]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise JudgeappError('{"number": "001", "name": "名前"} または {"players": [...]} の形で送ってください。', 400,
                            "bad_json")
    added = service.import_players(current_db(), actor, [(r.get("number"), r.get("name")) for r in rows])
    return {"results": [service.player_json(p) for p in added]}, 201


@bp.get("/events/<int:event_id>/players/<int:player_id>")
def player(event_id: int, player_id: int):
    api_staff(event_id)
    db = current_db()
    ev, policy = _policy(event_id)
    p = service.get_player(db, event_id, player_id)
    return service.player_json(p, service.player_record(db, policy, p))


@bp.get("/events/<int:event_id>/penalties")
def penalties(event_id: int):
    api_staff(event_id)

    def num(name):
        v = request.args.get(name, "")
        if v and service._id(v) < 0:
            raise JudgeappError(f"{name} は 1 以上の数字で指定してください。", 400, "bad_filter")
        return service._id(v) if v else None

    views = service.event_records(current_db(), event_id, player=num("player"), round_=num("round"),
                                  judge=num("judge"), level=request.args.get("level") or None)
    return {"results": [service.record_json(v) for v in views]}


@bp.post("/events/<int:event_id>/penalties")
def record(event_id: int):
    """Record a penalty; the answer has the record and the player's standing after it."""
    actor = api_staff(event_id, "record")
    db = current_db()
    lib = current_library()
    data = _body()
    if request.headers.get("Idempotency-Key"):
        data["idempotency_key"] = request.headers["Idempotency-Key"]
    p = service.record_penalty(db, lib.policies, actor, data, lib.policies.version)
    ev, policy = _policy(event_id)
    pl = service.get_player(db, event_id, p.player_id)
    rec = service.player_record(db, policy, pl)
    view = next(v for v in rec.records if v.penalty.id == p.id)
    return {"record": service.record_json(view), "player": service.player_json(pl, rec)}, 201


@bp.get("/events/<int:event_id>/penalties/<int:record_id>")
def record_one(event_id: int, record_id: int):
    api_staff(event_id)
    return service.record_json(service.get_record(current_db(), event_id, record_id))


@bp.post("/events/<int:event_id>/penalties/<int:record_id>/void")
def void(event_id: int, record_id: int):
    actor = api_staff(event_id, "void")
    service.void_record(current_db(), actor, record_id, _body().get("reason"))
    return service.record_json(service.get_record(current_db(), event_id, record_id)), 201


@bp.post("/events/<int:event_id>/penalties/<int:record_id>/appeal")
def appeal(event_id: int, record_id: int):
    actor = api_staff(event_id, "appeal")
    service.file_appeal(current_db(), actor, record_id, _body().get("grounds"))
    return service.record_json(service.get_record(current_db(), event_id, record_id)), 201


@bp.get("/events/<int:event_id>/appeals")
def appeals(event_id: int):
    api_staff(event_id)
    return {"results": [service.record_json(v) for v in service.pending_appeals(current_db(), event_id)]}


@bp.post("/events/<int:event_id>/appeals/<int:appeal_id>/decision")
def decide(event_id: int, appeal_id: int):
    actor = api_staff(event_id, "decide")
    service.decide_appeal(current_db(), current_library().policies, actor, appeal_id, _body())
    with current_db().reader() as s:
        penalty_id = s.get(Appeal, appeal_id).penalty_id
    return service.record_json(service.get_record(current_db(), event_id, penalty_id)), 201


@bp.get("/events/<int:event_id>/audit")
def audit(event_id: int):
    api_staff(event_id, "export")
    return {"results": [{"id": e.id, "at": service.iso(e.created_at), "staff": e.staff.name if e.staff else None,
                         "action": e.action, "target": e.target, "detail": e.detail}
                        for e in service.audit_log(current_db(), event_id)]}


@bp.get("/events/<int:event_id>/export.json")
def export(event_id: int):
    api_staff(event_id, "export")
    db = current_db()
    return {"event": service.event_json(service.get_event(db, event_id)),
            "records": [service.record_json(v) for v in service.event_records(db, event_id)]}
