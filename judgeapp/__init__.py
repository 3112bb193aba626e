"""judgeapp: floor rules, infraction wizard and event records for Japanese TCG judges."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from flask import Flask

ROOT = Path(__file__).resolve().parent.parent


def _secret_key(instance_path: str) -> str:
    """A per-installation secret kept in the instance folder (or SECRET_KEY from the environment)."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = Path(instance_path) / "secret_key"
    try:  # O_EXCL: when several processes start at once, exactly one writes the key
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    for _ in range(50):
        key = path.read_text().strip()
        if key:
            return key
        time.sleep(0.01)  # the writer has created the file but not written it yet
    raise RuntimeError(f"{path} is empty")


def load_settings(app: Flask, test_config: dict | None = None) -> None:
    """Defaults, then the instance config and JUDGEAPP_* environment (or the test mapping)."""
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    app.config.from_mapping(
        CORPUS_DIR=str(ROOT / "rules_corpus"),
        SYNONYMS_PATH=str(ROOT / "rules_corpus" / "synonyms.yaml"),
        INFRACTIONS_DIR=str(ROOT / "infractions"),
        EXTRA_CORPUS_DIRS=[],  # more corpus folders (games added by data alone), after CORPUS_DIR
        EXTRA_INFRACTIONS_DIRS=[],  # their infraction folders, after INFRACTIONS_DIR
        INDEX_DIR=str(Path(app.instance_path) / "search-index"),
        SITUATION_INDEX_DIR=str(Path(app.instance_path) / "situation-index"),
        DATABASE_URL=os.environ.get("DATABASE_URL") or f"sqlite:///{Path(app.instance_path) / 'judgeapp.db'}",
        PERMANENT_SESSION_LIFETIME=16 * 3600,  # an event day, from sign-in
        SESSION_REFRESH_EACH_REQUEST=False,  # no new cookie on every page (the server ends sessions anyway)
        WTF_CSRF_TIME_LIMIT=None,  # the token lives as long as the session: a form left open for a round works
        MAX_CONTENT_LENGTH=1024 * 1024,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        PASSCODE_HASH="scrypt",  # werkzeug's method for staff passcodes (docs/deploy.md)
    )
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env("JUDGEAPP")
    else:
        app.config.from_mapping(test_config)
    _check_passcode_hash(str(app.config["PASSCODE_HASH"]))


def _check_passcode_hash(method: str) -> None:
    """A PASSCODE_HASH werkzeug does not know stops the start, not the first sign-in (a 500)."""
    from werkzeug.security import generate_password_hash

    try:
        generate_password_hash("check", method=method)
    except (ValueError, TypeError) as exc:
        raise RuntimeError(
            f"PASSCODE_HASH={method!r} はパスコードのハッシュ方式として使えません（例: scrypt）: {exc}"
        ) from None


def _server_timing(app: Flask) -> None:
    """`Server-Timing: app;dur=<ms>` on every response: the time spent in the app, for benchmarks and devtools."""
    from flask import g

    @app.before_request
    def _start_timer():
        g._t0 = time.perf_counter()

    @app.after_request
    def _add_timing(response):
        t0 = g.get("_t0")
        if t0 is not None:
            response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - t0) * 1000:.2f}"
        return response


MAX_JSON_DEPTH = 32

from flask.json.provider import DefaultJSONProvider  # noqa: E402


class DepthLimitedJSON(DefaultJSONProvider):
    """JSON bodies nested deeper than MAX_JSON_DEPTH are unreadable (a 400, not a stack overflow's 500)."""

    def loads(self, s, **kwargs):
        try:
            data = super().loads(s, **kwargs)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None
        if _depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            raise ValueError("JSON nested too deeply")
        return data


def _depth(value, limit: int, level: int = 0) -> int:
    """How deep `value` nests (stops counting past `limit`)."""
    if level > limit or not isinstance(value, (dict, list)):
        return level
    items = value.values() if isinstance(value, dict) else value
    return max((_depth(v, limit, level + 1) for v in items), default=level + 1)


# 'self' scripts and service workers (static/), no inline script; the style sheet is inlined in base.html.
CSP = {
    "default-src": "'self'",
    "script-src": "'self'",
    "worker-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def _security_headers(app: Flask) -> None:
    """CSP, frame protection, nosniff and a referrer policy on every response (flask-talisman's headers). HSTS
    only when served over HTTPS (behind a proxy, with TRUST_PROXY: docs/deploy.md); Secure cookies with
    SESSION_COOKIE_SECURE.

    The header values do not depend on the request (no nonce, no per-view options): flask-talisman computes
    them once here, for a plain and for a secure request, and every response gets the stored ones (instead of
    the extension parsing its options and the policy again at each request)."""
    from flask import request
    from flask_talisman import Talisman

    probe = Flask(__name__)
    talisman = Talisman(
        probe,
        force_https=False,
        content_security_policy=CSP,
        frame_options="DENY",
        referrer_policy="same-origin",
        strict_transport_security=True,
        strict_transport_security_max_age=31536000,
    )
    headers = {}
    for secure in (False, True):
        with probe.test_request_context(base_url="https://x/" if secure else "http://x/"):
            headers[secure] = list(talisman._set_response_headers(probe.response_class()).headers.items())
            headers[secure] = [
                (k, v) for k, v in headers[secure] if k.lower() not in ("content-type", "content-length")
            ]

    @app.after_request
    def _set_security_headers(response):
        secure = request.is_secure or request.headers.get("X-Forwarded-Proto", "http") == "https"
        response.headers.update(headers[secure])
        return response


def _session_interface():
    """Flask's signed-cookie sessions, with the signing serializer made once per key (Flask builds a new one,
    with its signer, at every request, to open the session even when the request carries no cookie: every
    API call). A changed SECRET_KEY or SECRET_KEY_FALLBACKS makes a new one."""
    from flask.sessions import SecureCookieSessionInterface

    class Sessions(SecureCookieSessionInterface):
        _made: tuple | None = None

        def get_signing_serializer(self, app):
            keys = (app.secret_key, tuple(app.config["SECRET_KEY_FALLBACKS"] or ()))
            made = self._made
            if made is None or made[0] != keys:
                made = self._made = (keys, super().get_signing_serializer(app))
            return made[1]

    return Sessions()


def create_app(test_config: dict | None = None) -> Flask:
    """Build the app: defaults, then instance config (or the test mapping), then the library, then blueprints."""
    app = Flask(
        __name__, instance_relative_config=True, template_folder=str(ROOT / "templates"), static_folder=None
    )
    load_settings(app, test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app.instance_path)
    app.session_interface = _session_interface()
    app.json = DepthLimitedJSON(app)
    app.json.ensure_ascii = False
    if app.config.get("TRUST_PROXY"):  # behind one reverse proxy that sets X-Forwarded-* (docs/deploy.md)
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_proto=1, x_host=1)

    from .library import data_dirs, open_library

    corpus_dirs, infractions_dirs = data_dirs(app.config)
    app.extensions["judgeapp.library"] = open_library(
        corpus_dirs,
        app.config["INDEX_DIR"],
        app.config["SYNONYMS_PATH"],
        infractions_dir=infractions_dirs,
        situation_index_dir=app.config["SITUATION_INDEX_DIR"],
    )

    from flask_wtf.csrf import CSRFProtect

    from . import api, error_pages, rules, wizard
    from .events import routes as event_routes
    from .events.db import Database

    app.extensions["judgeapp.db"] = Database(app.config["DATABASE_URL"])

    csrf = CSRFProtect(app)  # every form; the JSON API is not cookie-authenticated and is exempt
    csrf.exempt(api.bp)
    app.register_blueprint(error_pages.bp)
    app.register_blueprint(rules.bp)
    app.register_blueprint(wizard.bp)
    app.register_blueprint(event_routes.bp)
    from .events import auth as event_auth
    from .events.permissions import TEMPLATE_HELPERS
    from .events.serialize import jst

    app.add_template_filter(jst, "jst")
    app.jinja_env.globals.update(TEMPLATE_HELPERS)
    event_auth.init_app(app)
    _security_headers(app)
    _server_timing(app)
    app.register_blueprint(api.bp, url_prefix="/api")
    from . import assets, offline

    app.register_blueprint(offline.bp)
    assets.init_app(app)

    @app.context_processor
    def _corpus_version():  # every page says which corpus it shows (the offline banner, the footer)
        return {"corpus_version": app.extensions["judgeapp.library"].corpus.version}

    return app
