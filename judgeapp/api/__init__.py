"""The JSON API (a contract: see docs/api.md)."""

from flask import Blueprint

bp = Blueprint("api", __name__)

from . import events, routes  # noqa: E402,F401
