"""Who is asking: a staff member signed in to an event (session cookie) or holding an API token."""

from __future__ import annotations

from flask import abort, current_app, g, redirect, request, session, url_for

from ..errors import JudgeappError
from . import service
from .db import Database
from .models import Staff


def current_db() -> Database:
    return current_app.extensions["judgeapp.db"]


def current_staff() -> Staff | None:
    """The signed-in staff member (cookie) or the token's owner (Authorization: Bearer …), once a request."""
    if "staff" in g:
        return g.staff
    staff = None
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        staff = service.staff_by_token(current_db(), auth[7:].strip())
        if staff is None:
            raise JudgeappError("API トークンが正しくありません。", 401, "bad_token")
    elif request.path.startswith("/api/"):
        staff = None  # the API is not authenticated by the browser's cookie
    elif session.get("staff"):
        with current_db().reader() as s:
            staff = s.get(Staff, session["staff"])
    g.staff = staff
    return staff


def page_staff(event_id: int, permission: str = "read") -> Staff:
    """For pages: the signed-in staff of this event, or off to the sign-in page."""
    staff = current_staff()
    if staff is None or staff.event_id != event_id:
        abort(redirect(url_for("events.signin", event_id=event_id, next=request.full_path)))
    return service.require(staff, permission, event_id)


def api_staff(event_id: int, permission: str = "read") -> Staff:
    staff = current_staff()
    if staff is None:
        raise JudgeappError("API トークンが必要です（Authorization: Bearer …）。", 401, "signin_required")
    return service.require(staff, permission, event_id)


def sign_in_session(staff: Staff) -> None:
    session.clear()
    session["staff"] = staff.id
    session["event"] = staff.event_id
    session.permanent = True
