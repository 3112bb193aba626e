"""JSON endpoints for event records, authenticated per staff member (Authorization: Bearer <token>).
Every body is checked by a strict schema (`events.forms`) before anything is read or written.
docs/api.md documents each with an example session."""

from __future__ import annotations

from flask import request

from ..errors import JudgeappError
from ..events import forms, records, serialize
from ..events import players as players_mod
from ..events import staff as staff_mod
from ..events.audit import audit_log
from ..events.auth import api_staff, client_address, current_db
from ..events.parsing import parse_id
from ..library import current_library
from . import bp


def _body(model: type[forms.Body]) -> dict:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise JudgeappError(
            "JSON オブジェクトを送ってください（Content-Type: application/json）。", 400, "bad_json"
        )
    return forms.parse(model, data)


def _policy(event_id: int):
    ev = staff_mod.get_event(current_db(), event_id)
    return ev, current_library().policies.games[ev.game]


@bp.post("/events")
def create_event():
    """A new event and its organizer; the answer holds the organizer's API token (shown once)."""
    ev, org, token = staff_mod.create_event(current_db(), current_library().policies, _body(forms.EventIn))
    return {"event": serialize.event_json(ev), "staff": serialize.staff_json(org), "token": token}, 201


@bp.post("/events/<int:event_id>/token")
def sign_in(event_id: int):
    """Sign in through the API: `{"name", "passcode"}` → a new token for that staff member (throttled)."""
    data = _body(forms.SignIn)
    staff_mod.get_event(current_db(), event_id)
    staff, token = staff_mod.token_by_passcode(
        current_db(), event_id, data["name"], data["passcode"], client_address()
    )
    return {
        "staff": serialize.staff_json(staff),
        "token": token,
        "expires_in": int(staff_mod.TOKEN_LIFETIME.total_seconds()),
    }, 201


@bp.delete("/events/<int:event_id>/token")
def sign_out(event_id: int):
    """Revoke the caller's own token (sign out of the API)."""
    actor = api_staff(event_id)
    staff_mod.revoke_token(current_db(), actor)
    return "", 204


@bp.patch("/events/<int:event_id>")
def update_event(event_id: int):
    """Organizer: correct the name, date, level, tier or rounds (a top cut adds rounds)."""
    actor = api_staff(event_id, "staff")
    ev = staff_mod.update_event(current_db(), current_library().policies, actor, _body(forms.EventPatch))
    return serialize.event_json(ev)


@bp.patch("/events/<int:event_id>/staff/<int:staff_id>")
def update_staff(event_id: int, staff_id: int):
    """Organizer: `{"passcode"}` resets a passcode, `{"role"}` changes the role, `{"active": false}`
    disables a
    member; each ends the member's sessions and token."""
    actor = api_staff(event_id, "staff")
    return serialize.staff_json(staff_mod.set_staff(current_db(), actor, staff_id, _body(forms.StaffPatch)))


@bp.get("/events/<int:event_id>")
def event(event_id: int):
    api_staff(event_id)
    db = current_db()
    ev, policy = _policy(event_id)
    everything = records.event_records(db, event_id)
    over = records.players_over_the_line(db, policy, event_id, everything)
    return {
        **serialize.event_json(ev),
        "staff": [serialize.staff_json(s) for s in staff_mod.list_staff(db, event_id)],
        "appeals_pending": [serialize.record_json(v) for v in everything if v.state == "appealed"],
        "players_over_the_line": [serialize.player_json(r.player, r) for r in over],
    }


@bp.post("/events/<int:event_id>/staff")
def add_staff(event_id: int):
    actor = api_staff(event_id, "staff")
    ev = staff_mod.get_event(current_db(), event_id)
    st = staff_mod.add_staff(
        current_db(), actor, _body(forms.StaffIn), staff_mod.grants_of(current_library().policies, ev)
    )
    return serialize.staff_json(st), 201


@bp.put("/events/<int:event_id>/staff/<int:staff_id>/grants")
def set_grants(event_id: int, staff_id: int):
    actor = api_staff(event_id, "staff")
    ev = staff_mod.get_event(current_db(), event_id)
    st = staff_mod.set_grants(
        current_db(),
        actor,
        staff_id,
        _body(forms.Grants)["grants"],
        staff_mod.grants_of(current_library().policies, ev),
    )
    return serialize.staff_json(st)


@bp.post("/events/<int:event_id>/staff/<int:staff_id>/token")
def token(event_id: int, staff_id: int):
    actor = api_staff(event_id)
    return {
        "token": staff_mod.issue_token(current_db(), actor, staff_id),
        "expires_in": int(staff_mod.TOKEN_LIFETIME.total_seconds()),
    }, 201


@bp.post("/events/<int:event_id>/join-links")
def join_link(event_id: int):
    """Organizer: a one-time join link for a role (valid for minutes); `url` is what the QR code holds."""
    from flask import url_for

    actor = api_staff(event_id, "staff")
    link, secret = staff_mod.create_join_link(current_db(), actor, _body(forms.JoinLinkIn)["role"])
    return {
        "url": url_for("events.join", event_id=event_id, secret=secret, _external=True),
        "role": link.role,
        "expires_at": serialize.iso(link.expires_at),
    }, 201


@bp.get("/events/<int:event_id>/players")
def players(event_id: int):
    api_staff(event_id)
    found = players_mod.find_players(current_db(), event_id, request.args.get("q", ""))
    return {"results": [serialize.player_json(p) for p in found]}


@bp.post("/events/<int:event_id>/players")
def add_players(event_id: int):
    """One player `{"number", "name"}` or many `{"players": [{"number", "name"}, …]}` (all or nothing)."""
    actor = api_staff(event_id, "players")
    data = request.get_json(silent=True)
    many = isinstance(data, dict) and "players" in data
    data = forms.parse(forms.PlayersIn if many else forms.PlayerIn, data)
    rows = data["players"] if many else [data]
    added = players_mod.import_players(current_db(), actor, [(r["number"], r["name"]) for r in rows])
    return {"results": [serialize.player_json(p) for p in added]}, 201


@bp.get("/events/<int:event_id>/players/<int:player_id>")
def player(event_id: int, player_id: int):
    api_staff(event_id)
    db = current_db()
    ev, policy = _policy(event_id)
    p = players_mod.get_player(db, event_id, player_id)
    return serialize.player_json(p, records.player_record(db, policy, p))


@bp.get("/events/<int:event_id>/penalties")
def penalties(event_id: int):
    api_staff(event_id)

    def num(name):
        v = request.args.get(name, "")
        if v and parse_id(v) < 0:
            raise JudgeappError(f"{name} は 1 以上の数字で指定してください。", 400, "bad_filter")
        return parse_id(v) if v else None

    views = records.event_records(
        current_db(),
        event_id,
        player=num("player"),
        round_=num("round"),
        judge=num("judge"),
        level=request.args.get("level") or None,
    )
    return {"results": [serialize.record_json(v) for v in views]}


@bp.post("/events/<int:event_id>/penalties")
def record(event_id: int):
    """Record a penalty; the answer has the record and the player's standing after it (not their other
    records: GET …/players/<id> has those). A repeated Idempotency-Key answers 200 with the earlier record."""
    actor = api_staff(event_id, "record")
    data = _body(forms.RecordIn)
    key = request.headers.get("Idempotency-Key")
    if key is not None:
        data["idempotency_key"] = key
    lib = current_library()
    # the event came with the acting member (one statement): no second read of it
    new = records.record_penalty(
        current_db(), lib.policies, actor, data, lib.policies.version, event=actor.event
    )
    # Only the step this record made: the whole history is at …/players/<id>.
    standing = serialize.standing_summary(new.player, last_step_only=True)
    player = {
        "id": new.player.player.id,
        "number": new.player.player.number,
        "name": new.player.player.name,
        "standing": standing,
        "removed": new.player.removed,
    }
    return {"record": serialize.record_json(new.view), "player": player}, (201 if new.created else 200)


@bp.get("/events/<int:event_id>/penalties/<int:record_id>")
def record_one(event_id: int, record_id: int):
    api_staff(event_id)
    return serialize.record_json(records.get_record(current_db(), event_id, record_id))


@bp.post("/events/<int:event_id>/penalties/<int:record_id>/void")
def void(event_id: int, record_id: int):
    actor = api_staff(event_id, "void")
    records.void_record(current_db(), actor, record_id, _body(forms.VoidIn)["reason"])
    return serialize.record_json(records.get_record(current_db(), event_id, record_id)), 201


@bp.post("/events/<int:event_id>/penalties/<int:record_id>/appeal")
def appeal(event_id: int, record_id: int):
    actor = api_staff(event_id, "appeal")
    records.file_appeal(current_db(), actor, record_id, _body(forms.AppealIn)["grounds"])
    return serialize.record_json(records.get_record(current_db(), event_id, record_id)), 201


@bp.get("/events/<int:event_id>/appeals")
def appeals(event_id: int):
    api_staff(event_id)
    return {"results": [serialize.record_json(v) for v in records.pending_appeals(current_db(), event_id)]}


@bp.post("/events/<int:event_id>/appeals/<int:appeal_id>/decision")
def decide(event_id: int, appeal_id: int):
    actor = api_staff(event_id, "decide")
    d = records.decide_appeal(
        current_db(), current_library().policies, actor, appeal_id, _body(forms.DecisionIn)
    )
    with current_db().reader() as s:
        from ..events.models import Appeal

        penalty_id = s.get(Appeal, d.appeal_id).penalty_id
    return serialize.record_json(records.get_record(current_db(), event_id, penalty_id)), 201


@bp.get("/events/<int:event_id>/audit")
def audit(event_id: int):
    api_staff(event_id, "export")
    return {
        "results": [
            {
                "id": e.id,
                "at": serialize.iso(e.created_at),
                "staff": e.staff.name if e.staff else None,
                "action": e.action,
                "target": e.target,
                "detail": e.detail,
            }
            for e in audit_log(current_db(), event_id)
        ]
    }


@bp.get("/events/<int:event_id>/export.json")
def export(event_id: int):
    api_staff(event_id, "export")
    from ..events.exports import export_json

    db = current_db()
    ev, policy = _policy(event_id)
    return export_json(db, policy, ev)
