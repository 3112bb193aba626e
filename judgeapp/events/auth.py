"""Who is asking, for the web layer: the session cookie (pages) or `Authorization: Bearer` (API), both
answered
by the one acting-staff check in `staff` (active, session version or token still good). Also the request's
database unit, the client address and same-site redirects."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, abort, current_app, g, redirect, request, session, url_for

from ..errors import JudgeappError
from . import staff as staff_mod
from .db import Database
from .models import Staff
from .permissions import require


def current_db() -> Database:
    return current_app.extensions["judgeapp.db"]


def client_address() -> str:
    """The client's address as the server sees it (behind a proxy, ProxyFix sets it: docs/deploy.md)."""
    return request.remote_addr or ""


def current_staff() -> Staff | None:
    """The acting member for this request (cookie on pages, token on /api/), checked once a request."""
    if "staff" in g:
        return g.staff
    staff = None
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        staff = staff_mod.acting_staff_by_token(current_db(), auth[7:].strip())
        if staff is None:
            raise JudgeappError(
                "API トークンが正しくないか、期限が切れたか、取り消されました。サインインし直してください。",
                401,
                "bad_token",
            )
    elif request.path.startswith("/api/"):
        staff = None  # the API is not authenticated by the browser's cookie
    elif session.get("staff"):
        staff = staff_mod.acting_staff_by_session(current_db(), session.get("staff"), session.get("sv"))
        if staff is None:
            session.clear()  # signed out elsewhere, disabled, passcode reset or role changed
    g.staff = staff
    return staff


def page_staff(event_id: int, permission: str = "read") -> Staff:
    """For pages: the acting member of this event, or off to the sign-in page."""
    staff = current_staff()
    if staff is None or staff.event_id != event_id:
        abort(redirect(url_for("events.signin", event_id=event_id, next=request.full_path)))
    return require(staff, permission, event_id)


def api_staff(event_id: int, permission: str = "read") -> Staff:
    staff = current_staff()
    if staff is None:
        raise JudgeappError("API トークンが必要です（Authorization: Bearer …）。", 401, "signin_required")
    return require(staff, permission, event_id)


def sign_in_session(staff: Staff) -> None:
    session.clear()
    session["staff"] = staff.id
    session["event"] = staff.event_id
    session["sv"] = staff.session_version or 0
    session.permanent = True


def safe_next(value: object, fallback: str) -> str:
    """A path on this site to go to after sign-in, else `fallback`: no scheme, no host, no backslash, no
    control characters (browsers drop tabs and newlines, so `/%09/evil` would become `//evil`)."""
    if not isinstance(value, str) or not value.startswith("/") or len(value) > 2000:
        return fallback
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value) or "\\" in value:
        return fallback
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or value.startswith("//"):
        return fallback
    return value


def init_app(app: Flask) -> None:
    """One database unit per request (a connection, an ORM session if needed), closed when the request ends."""

    @app.before_request
    def _open_unit() -> None:
        g._db_unit = current_db().open_unit()

    @app.teardown_request
    def _close_unit(_exc: BaseException | None) -> None:
        token = g.pop("_db_unit", None)
        if token is not None:
            current_db().close_unit(token)
