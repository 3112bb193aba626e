"""Errors a user can meet: one domain exception, one handler that renders a page or JSON."""

from __future__ import annotations

from flask import Blueprint

bp = Blueprint("errors", __name__)


class JudgeappError(Exception):
    """An error a user can meet, with its HTTP status, a stable code and a message in Japanese."""

    def __init__(self, message: str, status: int = 400, code: str = "bad_request"):
        message = message.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate from the input
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


from . import handlers  # noqa: E402,F401
