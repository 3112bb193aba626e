"""The errors a user (or an operator) can meet, in one family: each has an HTTP status, a stable code and a
Japanese message. The domain raises them; `judgeapp.error_pages` only renders them (a page, or
`{"error": {"code", "message"}}` under /api/). Nothing here imports Flask.
"""

from __future__ import annotations


class JudgeappError(Exception):
    """An error a user can meet, with its HTTP status, a stable code and a message in Japanese."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        message = message.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate from the input
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code


class ConflictError(JudgeappError):
    """The record's state changed under the request (a void, an appeal, a decision): 409, nothing written."""

    status = 409
    code = "conflict"


class StandingError(JudgeappError, ValueError):
    """A penalty the policy does not know (the message is Japanese, for the judge)."""

    code = "unknown_penalty"


class DeckError(JudgeappError, ValueError):
    """Deck list input a judge must fix (the message is Japanese)."""

    code = "bad_deck"


class _DataError(JudgeappError):
    """Data on disk that breaks its format; `problems` lists each one as 'file: key: message'."""

    status = 500

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


class CorpusError(_DataError):
    """The rules corpus breaks its format (found at start-up and by `judgeapp check`)."""

    code = "corpus_invalid"


class PolicyError(_DataError):
    """The infraction data breaks its format (found at start-up and by `judgeapp check`)."""

    code = "policy_invalid"
