"""Static files with content-hashed names, compression, and the caching headers for pages.

- `asset("app.css")` in a template gives `/static/app.<hash>.css`: the hash is the file's content, so the
  name changes when the file does and the file can be cached for a year (`immutable`).
- Pages get an `ETag` and answer `If-None-Match` with `304`; they are `no-cache` (always revalidated), and
  `private` when they depend on who is signed in.
- HTML, CSS, JS and JSON are compressed (brotli or gzip, as the browser accepts) by Flask-Compress.
"""

from __future__ import annotations

import hashlib
import mimetypes
from pathlib import Path

from flask import Flask, Response, abort, request

ONE_YEAR = 365 * 24 * 3600
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
COMPRESS_TYPES = [
    "text/html",
    "text/css",
    "application/javascript",
    "text/javascript",
    "application/json",
    "application/manifest+json",
    "image/svg+xml",
    "text/plain",
]


class Assets:
    """The static folder's files, each with the hash of its content (read once at start)."""

    def __init__(self, folder: Path = STATIC_DIR):
        self.folder = folder
        self.hashes: dict[str, str] = {}
        self._bodies: dict[str, bytes] = {}
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = path.relative_to(folder).as_posix()
                self.hashes[rel] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        self.by_hashed = {self.hashed_name(name): name for name in self.hashes}

    def body(self, name: str) -> bytes:
        """The file's bytes (the files are small: kept in memory once read)."""
        if name not in self._bodies:
            self._bodies[name] = (self.folder / name).read_bytes()
        return self._bodies[name]

    def hashed_name(self, name: str) -> str:
        stem, dot, ext = name.rpartition(".")
        return f"{stem}.{self.hashes[name]}.{ext}" if dot else f"{name}.{self.hashes[name]}"

    def url(self, name: str) -> str:
        """The URL of a static file by its plain name (`app.css`)."""
        return f"/static/{self.hashed_name(name)}"

    def urls(self) -> list[str]:
        return [self.url(n) for n in self.hashes]

    def digest(self) -> str:
        """One hash for all the files: part of the offline cache's version."""
        return hashlib.sha256("".join(f"{k}={v}" for k, v in self.hashes.items()).encode()).hexdigest()[:12]


def current_assets() -> Assets:
    from flask import current_app

    return current_app.extensions["judgeapp.assets"]


def init_app(app: Flask) -> None:
    """Register the static route, `asset()` for templates, compression and the page caching headers."""
    from flask_compress import Compress

    assets = Assets()
    app.extensions["judgeapp.assets"] = assets
    app.add_template_global(assets.url, "asset")

    @app.get("/static/<path:name>")
    def static_file(name: str):
        plain = assets.by_hashed.get(name)
        if plain is None:
            abort(404)
        resp = Response(assets.body(plain), mimetype=mimetypes.guess_type(plain)[0])
        resp.set_etag(assets.hashes[plain])
        resp.headers["Cache-Control"] = f"public, max-age={ONE_YEAR}, immutable"
        return resp.make_conditional(request)

    @app.get("/favicon.ico")
    def favicon():
        resp = Response(assets.body("icon-192.png"), mimetype="image/png")
        resp.set_etag(assets.hashes["icon-192.png"])
        resp.headers["Cache-Control"] = "public, max-age=604800"
        return resp.make_conditional(request)

    @app.after_request
    def page_caching(response: Response) -> Response:
        if request.method not in ("GET", "HEAD") or request.path.startswith("/static/"):
            return response
        if "Cache-Control" not in response.headers:
            signed_in = "session" in request.cookies
            response.headers["Cache-Control"] = "private, no-cache" if signed_in else "no-cache"
        if (
            response.status_code == 200
            and not response.direct_passthrough
            and response.mimetype
            in ("text/html", "application/json", "application/manifest+json", "text/javascript")
        ):
            response.add_etag(weak=True)
            response.make_conditional(request)
        return response

    app.config.setdefault("COMPRESS_MIMETYPES", COMPRESS_TYPES)
    app.config.setdefault("COMPRESS_MIN_SIZE", 300)
    app.config.setdefault("COMPRESS_ALGORITHM", ["br", "gzip"])
    app.config.setdefault("COMPRESS_BR_LEVEL", 5)
    Compress(app)
