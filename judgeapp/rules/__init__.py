"""Reading the floor rules and searching them."""

from flask import Blueprint

bp = Blueprint("rules", __name__)

from . import routes  # noqa: E402,F401
