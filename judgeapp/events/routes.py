"""Event pages: the event list and a new event, sign-in, the head judge's view, players, recording a penalty
(from a wizard outcome or directly, with a preview of the standing), a record with its void, appeal and
decision, staff and grants, the audit log and the exports."""

from __future__ import annotations

import json
import secrets

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    stream_with_context,
    url_for,
)

from ..errors import JudgeappError
from ..library import current_library
from . import audit as audit_mod
from . import audittext, desk, exports, records, serialize
from . import players as players_mod
from . import staff as staff_mod
from .auth import client_address, current_db, current_staff, page_staff, safe_next, sign_in_session
from .live import hub_for
from .models import LEVELS, ROLES
from .parsing import parse_id
from .permissions import PERMISSIONS, REFUSALS, may_rule

# The desk's script is static/desk.js, served with the app's hashed assets (the CSP allows no inline script).
bp = Blueprint("events", __name__)


def _policy(event):
    return current_library().policies.games[event.game]


def _form_error(template: str, exc: JudgeappError, **ctx):
    """Show the form again with the message; nothing was written."""
    return render_template(template, error=exc.message, form=request.form, **ctx), exc.status


@bp.get("/events")
def index():
    lib = current_library()
    return render_template(
        "events/index.html",
        events=staff_mod.list_events(current_db()),
        games=lib.corpus.games,
        staff=current_staff(),
    )


@bp.route("/events/new", methods=["GET", "POST"])
def new():
    lib = current_library()
    ctx = dict(
        games=lib.corpus.games,
        policies=lib.policies.games,
        levels=LEVELS,
        tiered=[p for p in lib.policies.games.values() if p.file.tiers],
    )
    if request.method == "GET":
        return render_template("events/new.html", form={}, **ctx)
    try:
        ev, organizer, _unseen = staff_mod.create_event(current_db(), lib.policies, request.form)
    except JudgeappError as exc:
        return _form_error("events/new.html", exc, **ctx)
    sign_in_session(organizer)
    # Post/Redirect/Get: a reload of the event page sends nothing again (no second event, no stale form
    # check). The API token is shown once, on the event page the redirect lands on, issued there: the session
    # cookie is signed, not encrypted, so it carries only the event's number, never the token (the one
    # create_event made is replaced unseen).
    session["created"] = ev.id
    return redirect(url_for("events.show", event_id=ev.id), 303)


@bp.route("/events/<int:event_id>/signin", methods=["GET", "POST"])
def signin(event_id: int):
    """Name and passcode (no list of the staff for anonymous visitors); then back to `next` on this site."""
    db = current_db()
    ev = staff_mod.get_event(db, event_id)
    nxt = safe_next(request.values.get("next"), url_for("events.show", event_id=event_id))
    if request.method == "GET":
        return render_template("events/signin.html", event=ev, form={}, next=nxt)
    try:
        staff = staff_mod.sign_in(
            db, event_id, request.form.get("name", ""), request.form.get("passcode", ""), client_address()
        )
    except JudgeappError as exc:
        return _form_error("events/signin.html", exc, event=ev, next=nxt)
    sign_in_session(staff)
    return redirect(nxt)


@bp.post("/events/signout")
def signout():
    """Sign out: the member's sessions end everywhere (a saved copy of the cookie no longer works)."""
    staff = current_staff()
    if staff is not None:
        staff_mod.sign_out(current_db(), staff)
    session.clear()
    return redirect(url_for("events.index"))


@bp.route("/events/<int:event_id>/join/<secret>", methods=["GET", "POST"])
def join(event_id: int, secret: str):
    """A join link (from the organizer's QR code): the new member types their name and is signed in."""
    db = current_db()
    ev = staff_mod.get_event(db, event_id)
    link = staff_mod.join_link(db, event_id, secret)
    if request.method == "GET":
        return render_template("events/join.html", event=ev, link=link, form={}, roles=ROLES)
    try:
        staff = staff_mod.join(db, event_id, secret, request.form.get("name"))
    except JudgeappError as exc:
        return _form_error("events/join.html", exc, event=ev, link=link, roles=ROLES)
    sign_in_session(staff)
    flash(f"{staff.name}さん（{staff.role_label}）として参加しました。")
    return redirect(url_for("events.show", event_id=event_id))


@bp.get("/events/<int:event_id>")
def show(event_id: int):
    """The head judge's view: appeals waiting, players over the line, every record with filters."""
    db = current_db()
    staff = page_staff(event_id)
    ev = staff_mod.get_event(db, event_id)
    policy = _policy(ev)

    def num(name):
        n = parse_id(request.args.get(name, ""))
        return n if n > 0 else None

    everything = records.event_records(db, event_id)
    level = request.args.get("level") or None
    shown = records.event_records(
        db, event_id, player=num("player"), round_=num("round"), judge=num("judge"), level=level
    )
    who = request.args.get("q", "").strip()
    if who:  # a player by number or name
        ids = {p.id for p in players_mod.find_players(db, event_id, who)}
        shown = [v for v in shown if v.penalty.player_id in ids]
    board = desk.desk(db, policy, event_id, everything)
    created = None
    if session.get("created") == event_id and staff is not None:
        session.pop("created")  # the token once: never again, nor in the phone's kept copy (no-store)
        created = {"event": event_id, "token": staff_mod.issue_token(db, staff, staff.id)}
    html = render_template(
        "events/show.html",
        event=ev,
        staff=staff,
        created=created,
        policy=policy,
        records=shown,
        desk=board,
        appeals=board.appeals,
        over=board.over,
        staff_list=staff_mod.list_staff(db, event_id),
        filters=request.args,
        levels=LEVELS,
        tiers=policy.file.tiers,
        round_roles=PERMISSIONS["round"],
        ack_roles=PERMISSIONS["acknowledge"],
    )
    return (html, 200, {"Cache-Control": "no-store"}) if created else html


@bp.get("/events/<int:event_id>/desk")
def desk_fragment(event_id: int):
    """The live part of the desk (appeals, notices, players over the line, latest records) as HTML: what the
    desk's script fetches when the stream says something changed."""
    db = current_db()
    staff = page_staff(event_id)
    ev = staff_mod.get_event(db, event_id)
    board = desk.desk(db, _policy(ev), event_id)
    resp = Response(
        render_template(
            "events/_desk.html", event=ev, staff=staff, desk=board, ack_roles=PERMISSIONS["acknowledge"]
        )
    )
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
        return Response(
            "retry: 5000\n\n", status=503, mimetype="text/event-stream", headers={"Retry-After": "5"}
        )
    seconds = float(current_app.config.get("LIVE_STREAM_SECONDS", 55))
    return Response(
        stream_with_context(hub.stream(event_id, q, seconds)),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


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
    return (
        nxt if nxt.startswith("/") and not nxt.startswith("//") else url_for("events.show", event_id=event_id)
    )


# --- players ----------------------------------------------------------------------------------------------


@bp.route("/events/<int:event_id>/players", methods=["GET", "POST"])
def players(event_id: int):
    db = current_db()
    staff = page_staff(event_id)
    ev = staff_mod.get_event(db, event_id)
    q = request.args.get("q", "")
    ctx = dict(event=ev, staff=staff, q=q)
    rnd = ev.current_round or 1
    ctx["round"] = rnd
    ctx["tables"] = desk.tables(db, event_id, rnd)
    try:
        found = players_mod.find_players(db, event_id, q)
    except JudgeappError as exc:
        return _form_error("events/players.html", exc, players=[], **ctx)
    if request.method == "POST":
        try:
            table = request.form.get("table", "").strip()
            if request.form.get("mode") == "list" or request.files.get("file"):
                upload = request.files.get("file")
                text = (
                    upload.read().decode("utf-8-sig", errors="strict")
                    if upload and upload.filename
                    else request.form.get("list", "")
                )
                roster = desk.parse_roster(text)
                if any(t for _, _, t in roster):  # number,name,table: players and this round's tables
                    done = desk.import_roster(db, staff, roster, request.form.get("round"))
                    flash(
                        f"{done['added']} 人を登録し、第 {done['round']} ラウンドの卓番号を {done['seated']} 人分"
                        "登録しました。"
                    )
                    return redirect(url_for("events.players", event_id=event_id))
                added = players_mod.import_players(db, staff, [(n, nm) for n, nm, _ in roster])
            elif table:
                done = desk.import_roster(
                    db,
                    staff,
                    [(request.form.get("number"), request.form.get("name"), table)],
                    request.form.get("round"),
                )
                flash(
                    f"{request.form.get('number')} の第 {done['round']} ラウンドの卓番号を {table} にしました。"
                )
                return redirect(url_for("events.players", event_id=event_id))
            else:
                added = [
                    players_mod.add_player(db, staff, request.form.get("number"), request.form.get("name"))
                ]
        except UnicodeDecodeError:
            exc = JudgeappError("CSV は UTF-8 で保存してください。", 400, "bad_encoding")
            return _form_error("events/players.html", exc, players=found, **ctx)
        except JudgeappError as exc:
            return _form_error("events/players.html", exc, players=found, **ctx)
        flash(f"{len(added)} 人を登録しました。")
        return redirect(url_for("events.players", event_id=event_id))
    return render_template("events/players.html", players=found, form={}, **ctx)


@bp.get("/events/<int:event_id>/players/<int:player_id>")
def player(event_id: int, player_id: int):
    db = current_db()
    staff = page_staff(event_id)
    ev = staff_mod.get_event(db, event_id)  # loaded with the member: no statement
    policy = _policy(ev)
    rec = records.player_page_record(db, policy, event_id, player_id)
    return render_template(
        "events/player.html",
        event=ev,
        staff=staff,
        rec=rec,
        policy=policy,
        printable=request.args.get("print") == "1",
        marks=lambda v: exports.mark_of(policy, v),
    )


# --- recording --------------------------------------------------------------------------------------------


@bp.route("/events/<int:event_id>/record", methods=["GET", "POST"])
def record(event_id: int):
    """Player, round, infraction, level and facts; then the standing it leads to; then confirm."""
    db = current_db()
    staff = page_staff(event_id, "record")
    ev = staff_mod.get_event(db, event_id)
    policy = _policy(ev)
    lib = current_library()
    src = request.form if request.method == "POST" else request.args
    game, _, iid = src.get("infraction", "").rpartition("/")
    inf = policy.infractions.get(iid) if game in ("", ev.game) else None
    answers = {k[2:]: v for k, v in src.items() if k.startswith("a.")}
    form = dict(src)
    if inf and "level" not in form and inf.penalty and not inf.head_judge:
        form["level"] = inf.penalty  # the text's level; where it decides nothing the judge must choose
    rnd = ev.current_round or 1  # the desk's round (an event starts in round 1, as its page shows)
    if not form.get("round"):
        form["round"] = str(rnd)  # the round is set once at the desk, never typed on the floor
    if inf and not form.get("facts"):
        form["facts"] = desk.wizard_facts(policy, inf, answers)  # what the judge chose, to edit
    form.setdefault("idempotency_key", secrets.token_urlsafe(16))
    ctx = dict(
        event=ev,
        staff=staff,
        policy=policy,
        inf=inf,
        answers=answers,
        corpus=lib.corpus,
        no_penalty=records.NO_PENALTY,
        hj_ruling=records.HJ_RULING,
        may_rule=may_rule(staff),
        ruling_choices=desk.ruling_choices(lib.policies, policy),
        found=[],
        players=[],
        chosen=None,
        path=desk.wizard_path(policy, answers),
    )
    try:
        if not src.get("player"):
            ctx["found"] = desk.find(db, event_id, src.get("q", ""), rnd)
            ctx["players"] = [p for p, _ in ctx["found"]]
        player_id = src.get("player") or (
            ctx["players"][0].id if src.get("q") and len(ctx["players"]) == 1 else None
        )
        if player_id:
            ctx["chosen"] = players_mod.get_player(db, event_id, player_id)
            ctx["table"] = desk.tables(db, event_id, rnd).get(ctx["chosen"].id, "")
    except JudgeappError as exc:
        return _form_error("events/record.html", exc, **ctx)
    if (
        request.method == "GET"
        and ctx["chosen"] is not None
        and all(form.get(k) for k in ("round", "level", "facts"))
    ):
        # Everything is known (a wizard outcome, the round of the desk): show what it comes to, to confirm.
        try:
            records.parse_record_form(policy, ev, {**form, "answers": answers})
            current, after = records.preview(db, policy, ctx["chosen"], form["level"])
            return render_template("events/record.html", form=form, preview=after, current=current, **ctx)
        except JudgeappError:
            pass  # the judge fills in what is missing, as without a wizard
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
            records.parse_record_form(policy, ev, data)
            if data.get("level") == records.HJ_RULING.id and not may_rule(staff):
                raise JudgeappError(REFUSALS["ruling"], 403, "not_granted")
            current, after = records.preview(db, policy, ctx["chosen"], data.get("level", ""))
            return render_template("events/record.html", form=form, preview=after, current=current, **ctx)
        new = records.record_penalty(db, lib.policies, staff, data, lib.policies.version, event=ev)
    except JudgeappError as exc:
        return _form_error("events/record.html", exc, **ctx)
    p = new.view.penalty
    flash(f"記録しました：{p.level_label}（第 {p.round} ラウンド）")
    return redirect(url_for("events.player", event_id=event_id, player_id=p.player_id))


def _detail(event_id: int, record_id: int, staff, error: JudgeappError | None = None):
    db = current_db()
    ev = staff_mod.get_event(db, event_id)
    view = records.get_record(db, event_id, record_id)
    return render_template(
        "events/record_detail.html",
        event=ev,
        staff=staff,
        v=view,
        policy=_policy(ev),
        corpus=current_library().corpus,
        error=error.message if error else None,
        form=request.form if error else {},
        **_readable(db, ev, view),
    ), (error.status if error else 200)


@bp.get("/events/<int:event_id>/records/<int:record_id>")
def record_detail(event_id: int, record_id: int):
    return _detail(event_id, record_id, page_staff(event_id))


def _names(db, event_id: int) -> audittext.Names:
    players = {p.id: f"{p.number} {p.name}" for p in players_mod.find_players(db, event_id, "", limit=100000)}
    staff = {s.id: f"{s.name}（{s.role_label}）" for s in staff_mod.list_staff(db, event_id)}
    return audittext.Names(players=players, staff=staff)


def _sentences(db, event_id: int, entries) -> list[tuple]:
    names = _names(db, event_id)
    return [
        (e, audittext.sentence(e.action, e.target, e.detail, e.staff.name if e.staff else None, names))
        for e in entries
    ]


def _readable(db, ev, view) -> dict:
    """A record as a person reads it: its history in sentences, the wizard's questions and answers, and the
    rule version as each cited document's version, with whether the rules changed since."""
    lib = current_library()
    entries = [
        e for e in audit_mod.audit_log(db, ev.id, limit=100000) if e.target == f"penalty:{view.penalty.id}"
    ]
    return dict(
        history=list(reversed(_sentences(db, ev.id, entries))),
        path=desk.wizard_path(_policy(ev), view.penalty.answers),
        same_rules=view.penalty.corpus_version == lib.policies.version,
    )


def _record_action(event_id: int, record_id: int, permission: str, action):
    db = current_db()
    staff = page_staff(event_id, permission)
    try:
        message = action(db, staff)
    except JudgeappError as exc:
        return _detail(event_id, record_id, staff, exc)
    flash(message)
    return redirect(url_for("events.record_detail", event_id=event_id, record_id=record_id))


@bp.post("/events/<int:event_id>/records/<int:record_id>/void")
def void(event_id: int, record_id: int):
    def act(db, st):
        records.void_record(db, st, record_id, request.form.get("reason"))
        return "記録を無効にしました。"

    return _record_action(event_id, record_id, "void", act)


@bp.post("/events/<int:event_id>/records/<int:record_id>/appeal")
def appeal(event_id: int, record_id: int):
    def act(db, st):
        records.file_appeal(db, st, record_id, request.form.get("grounds"))
        return "上告を記録しました。ヘッドジャッジが裁定します。"

    return _record_action(event_id, record_id, "appeal", act)


@bp.post("/events/<int:event_id>/records/<int:record_id>/decide")
def decide(event_id: int, record_id: int):
    def act(db, st):
        records.decide_record(db, current_library().policies, st, record_id, request.form)
        return "裁定を記録しました。この裁定は最終決定です。"

    return _record_action(event_id, record_id, "decide", act)


# --- staff, audit, export -----------------------------------------------------------------------------------


def join_qr_svg(url: str) -> str:
    """The join link as an inline SVG QR code (segno), for the organizer to show on their phone."""
    import segno

    return segno.make(url, error="m").svg_inline(scale=5, border=2, dark="#111", light="#fff")


@bp.route("/events/<int:event_id>/staff", methods=["GET", "POST"])
def staff_page(event_id: int):
    """Staff and the event's settings: the organizer adds staff, shows a join link as a QR code, grants what
    the policy restricts, resets a passcode, changes a role, disables a member, and corrects the event; each
    member can take an API token for themself."""
    db = current_db()
    staff = page_staff(event_id)
    ev = staff_mod.get_event(db, event_id)
    lib = current_library()
    policy = _policy(ev)
    grants = [lv for lv in policy.levels.values() if lv.grant] + [records.HJ_RULING]  # every game: the ruling
    allowed = staff_mod.grants_of(lib.policies, ev)
    token = join = None
    error = None
    if request.method == "POST":
        try:
            action = request.form.get("action")
            target = request.form.get("staff", "")
            if action == "add":
                staff_mod.add_staff(db, staff, request.form, allowed)
                flash("スタッフを追加しました。")
            elif action == "grants":
                staff_mod.set_grants(db, staff, target, request.form.getlist("grants"), allowed)
                flash("権限を変更しました。")
            elif action == "update":
                staff_mod.set_staff(
                    db,
                    staff,
                    target,
                    {k: v for k, v in request.form.items() if k in ("passcode", "active", "role")},
                )
                flash("スタッフを変更しました。")
            elif action == "token":
                token = staff_mod.issue_token(db, staff, target)
            elif action == "join":
                link, secret = staff_mod.create_join_link(db, staff, request.form.get("role"))
                url = url_for("events.join", event_id=event_id, secret=secret, _external=True)
                join = {
                    "url": url,
                    "qr": join_qr_svg(url),
                    "role": ROLES[link.role],
                    "expires": serialize.jst(link.expires_at, "%H:%M"),
                }
            elif action == "event":
                ev = staff_mod.update_event(db, lib.policies, staff, request.form)
                flash("大会の設定を変更しました。")
            else:
                raise JudgeappError("操作を選んでください。", 400, "bad_action")
        except JudgeappError as exc:
            error = exc
        if error is None and token is None and join is None:
            return redirect(url_for("events.staff_page", event_id=event_id))
    return render_template(
        "events/staff.html",
        event=ev,
        staff=staff,
        staff_list=staff_mod.list_staff(db, event_id),
        roles=ROLES,
        grants=grants,
        token=token,
        join=join,
        join_roles=staff_mod.JOIN_ROLES,
        error=error.message if error else None,
        form=request.form if error else {},
        levels=LEVELS,
        tiers=policy.file.tiers,
    ), (error.status if error else 200)


@bp.get("/events/<int:event_id>/audit")
def audit(event_id: int):
    db = current_db()
    staff = page_staff(event_id, "export")
    return render_template(
        "events/audit.html",
        event=staff_mod.get_event(db, event_id),
        staff=staff,
        entries=_sentences(db, event_id, audit_mod.audit_log(db, event_id)),
    )


@bp.get("/events/<int:event_id>/export.csv")
def export_csv(event_id: int):
    """The records for a spreadsheet (columns: docs/exports.md)."""
    db = current_db()
    page_staff(event_id, "export")
    ev = staff_mod.get_event(db, event_id)
    body = exports.export_csv(db, _policy(ev), current_library().corpus, ev)
    resp = Response(
        body, headers={"Content-Disposition": f"attachment; filename=event-{event_id}-penalties.csv"}
    )
    resp.headers["Content-Type"] = "text/csv; charset=utf-8"
    return resp


@bp.get("/events/<int:event_id>/export.json")
def export_json(event_id: int):
    db = current_db()
    page_staff(event_id, "export")
    ev = staff_mod.get_event(db, event_id)
    body = exports.export_json(db, _policy(ev), ev)
    resp = Response(
        json.dumps(body, ensure_ascii=False, indent=1),
        headers={"Content-Disposition": f"attachment; filename=event-{event_id}.json"},
    )
    resp.headers["Content-Type"] = "application/json"
    return resp


@bp.get("/events/<int:event_id>/print")
def print_event(event_id: int):
    """The whole event on A4 for the organizer and the publisher: each player's score card and records."""
    db = current_db()
    staff = page_staff(event_id, "export")
    ev = staff_mod.get_event(db, event_id)
    policy = _policy(ev)
    recs = [
        records.player_record(db, policy, p) for p in players_mod.find_players(db, event_id, "", limit=100000)
    ]
    recs = [r for r in recs if r.records]
    return render_template(
        "events/print.html",
        event=ev,
        staff=staff,
        policy=policy,
        recs=recs,
        marks=lambda v: exports.mark_of(policy, v),
        printed_by=staff.name,
    )
