"""The infraction wizard, the situation lookup, the consequence preview and training."""

from flask import Blueprint

bp = Blueprint("wizard", __name__)

from . import routes  # noqa: E402,F401
