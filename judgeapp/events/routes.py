"""Event pages: the event list and a new event, sign-in, the head judge's view, players, recording a penalty
(from a wizard outcome or directly, with a preview of the standing), a record with its void, appeal and
decision, staff and grants, the audit log and the exports."""

from __future__ import annotations

import json
import secrets

from flask import (Blueprint, Response, current_app, flash, redirect, render_template, request, session,
                   stream_with_context, url_for)

from .. import ROOT
from ..errors import JudgeappError
from ..library import current_library
from . import audittext, desk, exports, service
from .auth import current_db, current_staff, page_staff, sign_in_session
from .live import hub_for
from .models import LEVELS, ROLES

# The desk's script is a static file (no inline script: the pages' CSP allows scripts from 'self' only).
bp = Blueprint("events", __name__, static_folder=str(ROOT / "static"), static_url_path="/assets")


def _policy(event):
    return current_library().policies.games[event.game]


def _form_error(template: str, exc: JudgeappError, **ctx):
    """Show the form again with the message; nothing was written."""
    return render_template(template, error=exc.message, form=request.form, **ctx), exc.status


@bp.get("/events")
def index():
    lib = current_library()
    return render_template("events/index.html", events=service.list_events(current_db()),
                           games=lib.corpus.games, staff=current_staff())


@bp.route("/events/new", methods=["GET", "POST"])
def new():
    lib = current_library()
    ctx = dict(games=lib.corpus.games, policies=lib.policies.games, levels=LEVELS)
    if request.method == "GET":
        return render_template("events/new.html", form={}, **ctx)
    try:
        ev, organizer, token = service.create_event(current_db(), lib.policies, request.form)
    except JudgeappError as exc:
        return _form_error("events/new.html", exc, **ctx)
    sign_in_session(organizer)
    return render_template("events/created.html", event=ev, organizer=organizer, token=token)


@bp.route("/events/<int:event_id>/signin", methods=["GET", "POST"])
def signin(event_id: int):
    db = current_db()
    ev = service.get_event(db, event_id)
    names = [s.name for s in service.list_staff(db, event_id)]
    nxt = request.values.get("next", "")
    if not nxt.startswith("/") or nxt.startswith("//"):
        nxt = url_for("events.show", event_id=event_id)
    if request.method == "GET":
        return render_template("events/signin.html", event=ev, names=names, form={}, next=nxt)
    try:
        staff = service.sign_in(db, event_id, request.form.get("name", ""), request.form.get("passcode", ""))
    except JudgeappError as exc:
        return _form_error("events/signin.html", exc, event=ev, names=names, next=nxt)
    sign_in_session(staff)
    return redirect(nxt)


@bp.post("/events/signout")
def signout():
    session.clear()
    return redirect(url_for("events.index"))


@bp.get("/events/<int:event_id>")
def show(event_id: int):
    """The head judge's view: appeals waiting, players over the line, every record with filters."""
    db = current_db()
    staff = page_staff(event_id)
    ev = service.get_event(db, event_id)
    policy = _policy(ev)

    def num(name):
        n = service._id(request.args.get(name, ""))
        return n if n > 0 else None

    level = request.args.get("level") or None
    records = service.event_records(db, event_id, player=num("player"), round_=num("round"), judge=num("judge"),
                                    level=level)
    who = request.args.get("q", "").strip()
    if who:  # a player by number or name
        ids = {p.id for p in service.find_players(db, event_id, who)}
        records = [v for v in records if v.penalty.player_id in ids]
    board = desk.desk(db, policy, event_id)
    return render_template(
        "events/show.html", event=ev, staff=staff, policy=policy, records=records, desk=board,
        appeals=board.appeals, over=board.over, staff_list=service.list_staff(db, event_id), filters=request.args,
        levels=LEVELS, round_roles=desk.ROUND_ROLES, ack_roles=desk.ACK_ROLES,
    )


@bp.get("/events/<int:event_id>/desk")
def desk_fragment(event_id: int):
    """The live part of the desk (appeals, notices, players over the line, latest records) as HTML: what the
    desk's script fetches when the stream says something changed."""
    db = current_db()
    staff = page_staff(event_id)
    ev = service.get_event(db, event_id)
    board = desk.desk(db, _policy(ev), event_id)
    resp = Response(render_template("events/_desk.html", event=ev, staff=staff, desk=board,
                                    ack_roles=desk.ACK_ROLES))
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/events/<int:event_id>/desk/stream")
def desk_stream(event_id: int):
    """Server-Sent Events: one `change` per record, void, appeal, decision, notice or round of this event,
    from any server process (LISTEN/NOTIFY on PostgreSQL). 503 when this process has no stream to spare:
    the desk then reloads its fragment every few seconds instead."""
    page_staff(event_id)
    hub = hub_for(current_app)
    q = hub.subscribe(event_id)
    if q is None:
        return Response("retry: 5000\n\n", status=503, mimetype="text/event-stream",
                        headers={"Retry-After": "5"})
    seconds = float(current_app.config.get("LIVE_STREAM_SECONDS", 55))
    return Response(stream_with_context(hub.stream(event_id, q, seconds)), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@bp.post("/events/<int:event_id>/round")
def set_round(event_id: int):
    db = current_db()
    staff = page_staff(event_id)
    try:
        ev = desk.set_round(db, staff, request.form.get("round"))
    except JudgeappError as exc:
        flash(exc.message)
    else:
        flash(f"現在のラウンドを第 {ev.current_round} ラウンドにしました。")
    return redirect(_back(event_id))


@bp.post("/events/<int:event_id>/notices/<int:notice_id>/ack")
def ack(event_id: int, notice_id: int):
    db = current_db()
    staff = page_staff(event_id)
    try:
        desk.ack_notice(db, staff, notice_id)
    except JudgeappError as exc:
        flash(exc.message)
    else:
        flash("通知を確認済みにしました。")
    return redirect(url_for("events.show", event_id=event_id))


def _back(event_id: int) -> str:
    nxt = request.form.get("next", "")
    return nxt if nxt.startswith("/") and not nxt.startswith("//") else url_for("events.show", event_id=event_id)


# --- players ----------------------------------------------------------------------------------------------


@bp.route("/events/<int:event_id>/players", methods=["GET", "POST"])
def players(event_id: int):
    db = current_db()
    staff = page_staff(event_id)
    ev = service.get_event(db, event_id)
    q = request.args.get("q", "")
    ctx = dict(event=ev, staff=staff, q=q)
    rnd = ev.current_round or 1
    ctx["round"] = rnd
    ctx["tables"] = desk.tables(db, event_id, rnd)
    if request.method == "POST":
        try:
            table = request.form.get("table", "").strip()
            if request.form.get("mode") == "list" or request.files.get("file"):
                upload = request.files.get("file")
                text = upload.read().decode("utf-8-sig", errors="strict") if upload and upload.filename else \
                    request.form.get("list", "")
                roster = desk.parse_roster(text)
                if any(t for _, _, t in roster):  # number,name,table: players and this round's tables
                    done = desk.import_roster(db, staff, roster, request.form.get("round"))
                    flash(f"{done['added']} 人を登録し、第 {done['round']} ラウンドの卓番号を {done['seated']} 人分"
                          "登録しました。")
                    return redirect(url_for("events.players", event_id=event_id))
                added = service.import_players(db, staff, [(n, nm) for n, nm, _ in roster])
            elif table:
                done = desk.import_roster(db, staff, [(request.form.get("number"), request.form.get("name"), table)],
                                          request.form.get("round"))
                flash(f"{request.form.get('number')} の第 {done['round']} ラウンドの卓番号を {table} にしました。")
                return redirect(url_for("events.players", event_id=event_id))
            else:
                added = [service.add_player(db, staff, request.form.get("number"), request.form.get("name"))]
        except UnicodeDecodeError:
            exc = JudgeappError("CSV は UTF-8 で保存してください。", 400, "bad_encoding")
            return _form_error("events/players.html", exc, players=service.find_players(db, event_id, q), **ctx)
        except JudgeappError as exc:
            return _form_error("events/players.html", exc, players=service.find_players(db, event_id, q), **ctx)
        flash(f"{len(added)} 人を登録しました。")
        return redirect(url_for("events.players", event_id=event_id))
    return render_template("events/players.html", players=service.find_players(db, event_id, q), form={}, **ctx)


@bp.get("/events/<int:event_id>/players/<int:player_id>")
def player(event_id: int, player_id: int):
    db = current_db()
    staff = page_staff(event_id)
    ev = service.get_event(db, event_id)
    pl = service.get_player(db, event_id, player_id)
    policy = _policy(ev)
    rec = service.player_record(db, policy, pl)
    return render_template("events/player.html", event=ev, staff=staff, rec=rec, policy=policy,
                           printable=request.args.get("print") == "1", marks=lambda v: exports.mark_of(policy, v))


# --- recording --------------------------------------------------------------------------------------------


@bp.route("/events/<int:event_id>/record", methods=["GET", "POST"])
def record(event_id: int):
    """Player, round, infraction, level and facts; then the standing it leads to; then confirm."""
    db = current_db()
    staff = page_staff(event_id, "record")
    ev = service.get_event(db, event_id)
    policy = _policy(ev)
    lib = current_library()
    src = request.form if request.method == "POST" else request.args
    game, _, iid = src.get("infraction", "").rpartition("/")
    inf = policy.infractions.get(iid) if game in ("", ev.game) else None
    answers = {k[2:]: v for k, v in src.items() if k.startswith("a.")}
    form = dict(src)
    if inf and "level" not in form and inf.penalty and not inf.head_judge:
        form["level"] = inf.penalty  # the text's level; where it decides nothing the judge must choose
    if not form.get("round") and ev.current_round:
        form["round"] = str(ev.current_round)  # the round is set once at the desk, never typed on the floor
    if inf and not form.get("facts"):
        form["facts"] = desk.wizard_facts(policy, inf, answers)  # what the judge chose, to edit
    form.setdefault("idempotency_key", secrets.token_urlsafe(16))
    q = src.get("q", "")
    found = desk.find(db, event_id, q, ev.current_round) if not src.get("player") else []
    ctx = dict(event=ev, staff=staff, policy=policy, inf=inf, answers=answers, corpus=lib.corpus,
               no_penalty=service.NO_PENALTY, hj_ruling=desk.HJ_RULING, may_rule=desk.may_rule(staff),
               ruling_choices=desk.ruling_choices(lib.policies, policy),
               found=found, players=[p for p, _ in found], chosen=None,
               path=desk.wizard_path(policy, answers))
    player_id = src.get("player") or (found[0][0].id if q and len(found) == 1 else None)
    if player_id:
        try:
            ctx["chosen"] = service.get_player(db, event_id, player_id)
        except JudgeappError as exc:
            return _form_error("events/record.html", exc, **ctx)
        ctx["table"] = desk.tables(db, event_id, ev.current_round).get(ctx["chosen"].id, "")
    if request.method == "GET" and ctx["chosen"] is not None and all(form.get(k) for k in ("round", "level", "facts")):
        # Everything is known (a wizard outcome, the round of the desk): show what it comes to, to confirm.
        try:
            current, after = service.preview(db, policy, ctx["chosen"], form["level"])
            return render_template("events/record.html", form=form, preview=after, current=current, **ctx)
        except JudgeappError:
            pass
    if request.method == "GET":
        return render_template("events/record.html", form=form, **ctx)
    data = dict(request.form)
    data["answers"] = answers
    upgrade = request.form.get("upgrade")
    if upgrade:  # the judge chose the discretionary upgrade the preview offered
        before = policy.resolve(data.get("level", ""))
        data["level"] = upgrade
        data["notes"] = f"{data.get('notes', '')}［{before.label if before else ''}から格上げ］".strip()
    try:
        if request.form.get("action") != "confirm" and not upgrade:
            if ctx["chosen"] is None:
                raise JudgeappError("選手を選んでください。", 400, "missing_field")
            service._int(data.get("round", ""), "ラウンド", 1, ev.rounds)
            service._clean(data.get("facts"), "事実（何が起きたか）", 2000)
            if data.get("level") == desk.HJ_RULING.id:
                desk.check_ruling(staff)
                desk.ruling_text(policy, data)
            current, after = service.preview(db, policy, ctx["chosen"], data.get("level", ""))
            return render_template("events/record.html", form=form, preview=after, current=current, **ctx)
        p = service.record_penalty(db, lib.policies, staff, data, lib.policies.version)
    except JudgeappError as exc:
        return _form_error("events/record.html", exc, **ctx)
    flash(f"記録しました：{p.level_label}（第 {p.round} ラウンド）")
    return redirect(url_for("events.player", event_id=event_id, player_id=p.player_id))


@bp.get("/events/<int:event_id>/records/<int:record_id>")
def record_detail(event_id: int, record_id: int):
    db = current_db()
    staff = page_staff(event_id)
    ev = service.get_event(db, event_id)
    view = service.get_record(db, event_id, record_id)
    return render_template("events/record_detail.html", event=ev, staff=staff, v=view, policy=_policy(ev),
                           corpus=current_library().corpus, form={}, perms=service.PERMISSIONS,
                           **_readable(db, ev, view))


def _names(db, event_id: int) -> audittext.Names:
    players = {p.id: f"{p.number} {p.name}" for p in service.find_players(db, event_id, "", limit=100000)}
    staff = {s.id: f"{s.name}（{s.role_label}）" for s in service.list_staff(db, event_id)}
    return audittext.Names(players=players, staff=staff)


def _sentences(db, event_id: int, entries) -> list[tuple]:
    names = _names(db, event_id)
    return [(e, audittext.sentence(e.action, e.target, e.detail, e.staff.name if e.staff else None, names))
            for e in entries]


def _readable(db, ev, view) -> dict:
    """A record as a person reads it: its history in sentences, the wizard's questions and answers, and the
    rule version as each cited document's version, with whether the rules changed since."""
    lib = current_library()
    entries = [e for e in service.audit_log(db, ev.id, limit=100000) if e.target == f"penalty:{view.penalty.id}"]
    return dict(history=list(reversed(_sentences(db, ev.id, entries))),
                path=desk.wizard_path(_policy(ev), view.penalty.answers),
                same_rules=view.penalty.corpus_version == lib.policies.version)


def _record_action(event_id: int, record_id: int, permission: str, action):
    db = current_db()
    staff = page_staff(event_id, permission)
    try:
        message = action(db, staff)
    except JudgeappError as exc:
        ev = service.get_event(db, event_id)
        view = service.get_record(db, event_id, record_id)
        return render_template("events/record_detail.html", event=ev, staff=staff, v=view, policy=_policy(ev),
                               corpus=current_library().corpus, error=exc.message, form=request.form,
                               perms=service.PERMISSIONS, **_readable(db, ev, view)), exc.status
    flash(message)
    return redirect(url_for("events.record_detail", event_id=event_id, record_id=record_id))


@bp.post("/events/<int:event_id>/records/<int:record_id>/void")
def void(event_id: int, record_id: int):
    return _record_action(event_id, record_id, "void", lambda db, st: (
        service.void_record(db, st, record_id, request.form.get("reason")), "記録を無効にしました。")[1])


@bp.post("/events/<int:event_id>/records/<int:record_id>/appeal")
def appeal(event_id: int, record_id: int):
    return _record_action(event_id, record_id, "appeal", lambda db, st: (
        service.file_appeal(db, st, record_id, request.form.get("grounds")), "上告を記録しました。ヘッドジャッジが裁定します。")[1])


@bp.post("/events/<int:event_id>/records/<int:record_id>/decide")
def decide(event_id: int, record_id: int):
    def act(db, st):
        view = service.get_record(db, event_id, record_id)
        if view.appeal is None:
            raise JudgeappError("この記録には上告がありません。", 409, "no_appeal")
        service.decide_appeal(db, current_library().policies, st, view.appeal.id, request.form)
        return "裁定を記録しました。この裁定は最終決定です。"
    return _record_action(event_id, record_id, "decide", act)


# --- staff, audit, export -----------------------------------------------------------------------------------


@bp.route("/events/<int:event_id>/staff", methods=["GET", "POST"])
def staff_page(event_id: int):
    """Staff and the event's settings: the organizer adds staff, grants what the policy restricts, resets a
    passcode, disables a member, and corrects the event; each member can take an API token for themself."""
    db = current_db()
    staff = page_staff(event_id)
    ev = service.get_event(db, event_id)
    lib = current_library()
    policy = _policy(ev)
    grants = [lv for lv in policy.levels.values() if lv.grant]
    allowed = service.grants_of(lib.policies, ev)
    token = None
    error = None
    if request.method == "POST":
        try:
            action = request.form.get("action")
            target = request.form.get("staff", "")
            if action == "add":
                service.add_staff(db, staff, request.form, allowed)
                flash("スタッフを追加しました。")
            elif action == "grants":
                service.set_grants(db, staff, target, request.form.getlist("grants"), allowed)
                flash("権限を変更しました。")
            elif action == "update":
                service.set_staff(db, staff, target, {k: v for k, v in request.form.items() if k in ("passcode", "active")})
                flash("スタッフを変更しました。")
            elif action == "token":
                token = service.issue_token(db, staff, target)
            elif action == "event":
                ev = service.update_event(db, lib.policies, staff, request.form)
                flash("大会の設定を変更しました。")
            else:
                raise JudgeappError("操作を選んでください。", 400, "bad_action")
        except JudgeappError as exc:
            error = exc
        if error is None and token is None:
            return redirect(url_for("events.staff_page", event_id=event_id))
    return render_template("events/staff.html", event=ev, staff=staff, staff_list=service.list_staff(db, event_id),
                           roles=ROLES, grants=grants, token=token, error=error.message if error else None,
                           form=request.form if error else {}, levels=LEVELS,
                           uses_tier=policy.file.competitive_question), (error.status if error else 200)


@bp.get("/events/<int:event_id>/audit")
def audit(event_id: int):
    db = current_db()
    staff = page_staff(event_id, "export")
    return render_template("events/audit.html", event=service.get_event(db, event_id), staff=staff,
                           entries=_sentences(db, event_id, service.audit_log(db, event_id)))


@bp.get("/events/<int:event_id>/export.csv")
def export_csv(event_id: int):
    """The records for a spreadsheet (columns: docs/exports.md)."""
    db = current_db()
    page_staff(event_id, "export")
    ev = service.get_event(db, event_id)
    body = exports.export_csv(db, _policy(ev), current_library().corpus, ev)
    resp = Response(body, headers={"Content-Disposition": f"attachment; filename=event-{event_id}-penalties.csv"})
    resp.headers["Content-Type"] = "text/csv; charset=utf-8"
    return resp


@bp.get("/events/<int:event_id>/export.json")
def export_json(event_id: int):
    db = current_db()
    page_staff(event_id, "export")
    ev = service.get_event(db, event_id)
    body = exports.export_json(db, _policy(ev), ev)
    resp = Response(json.dumps(body, ensure_ascii=False, indent=1),
                    headers={"Content-Disposition": f"attachment; filename=event-{event_id}.json"})
    resp.headers["Content-Type"] = "application/json"
    return resp


@bp.get("/events/<int:event_id>/print")
def print_event(event_id: int):
    """The whole event on A4 for the organizer and the publisher: each player's score card and records."""
    db = current_db()
    staff = page_staff(event_id, "export")
    ev = service.get_event(db, event_id)
    policy = _policy(ev)
    recs = [service.player_record(db, policy, p) for p in service.find_players(db, event_id, "", limit=100000)]
    recs = [r for r in recs if r.records]
    return render_template("events/print.html", event=ev, staff=staff, policy=policy, recs=recs,
                           marks=lambda v: exports.mark_of(policy, v), printed_by=staff.name)
