"""The shapes of what the API accepts (and the pages' forms, read the same way): pydantic models with strict
types and no unknown keys. `parse(Model, data)` answers a JudgeappError (400, Japanese, naming the field) for
a wrong type, a missing field, an unknown key or a control character, before anything is read or written.

JSON bodies come strict (`"active": []`, `1.5` or `"tru"` are refused, not guessed). The pages' forms send
only text, which the same parsing helpers (`events.parsing`) read inside the domain functions.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from ..errors import JudgeappError
from .parsing import bad_chars

LABELS = {
    "name": "名前",
    "game": "ゲーム",
    "date": "開催日",
    "level": "レベル",
    "tier": "階層レベル",
    "rounds": "ラウンド数",
    "organizer": "主催者の名前",
    "passcode": "パスコード",
    "role": "役割",
    "grants": "権限",
    "active": "active",
    "number": "選手番号",
    "players": "players",
    "player": "選手",
    "round": "ラウンド",
    "facts": "事実",
    "notes": "メモ",
    "infraction": "違反",
    "answers": "answers",
    "idempotency_key": "Idempotency-Key",
    "reason": "理由",
    "grounds": "上告の理由",
    "outcome": "裁定",
}

Text = Annotated[StrictStr, Field(max_length=4000)]
IntOrDigits = StrictInt | Annotated[StrictStr, Field(max_length=12)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EventIn(Body):
    name: Text
    game: Text
    date: Text
    level: Text
    tier: IntOrDigits | None = None
    rounds: IntOrDigits
    organizer: Text
    passcode: Text


class EventPatch(Body):
    name: Text | None = None
    date: Text | None = None
    level: Text | None = None
    tier: IntOrDigits | None = None
    rounds: IntOrDigits | None = None


class SignIn(Body):
    name: Text
    passcode: Text


class StaffIn(Body):
    name: Text
    role: Text
    passcode: Text
    grants: list[Text] = []


class StaffPatch(Body):
    passcode: Text | None = None
    active: StrictBool | None = None
    role: Text | None = None


class Grants(Body):
    grants: list[Text]


class PlayerIn(Body):
    number: Text | StrictInt
    name: Text


class PlayersIn(Body):
    players: list[PlayerIn] = Field(max_length=2000)


class RecordIn(Body):
    player: IntOrDigits
    round: IntOrDigits
    level: Text
    facts: Text
    notes: Text = ""
    infraction: Text | None = None
    answers: dict[Text, Text] = Field(default_factory=dict, max_length=20)
    idempotency_key: Text | None = None
    ruling: Text | None = (
        None  # level head-judge-ruling: what the head judge ruled (a consequence or own words)
    )


class VoidIn(Body):
    reason: Text


class AppealIn(Body):
    grounds: Text


class DecisionIn(Body):
    outcome: Text
    reason: Text
    level: Text | None = None


class JoinLinkIn(Body):
    role: Text


MULTILINE = {"facts", "notes", "reason", "grounds"}
_MESSAGES = {
    "missing": "{label}がありません。",
    "extra_forbidden": "「{field}」という項目は使えません。",
    "string_type": "{label}は文字で送ってください。",
    "int_type": "{label}は整数で送ってください。",
    "bool_type": "{label}は true か false で送ってください。",
    "list_type": "{label}は配列で送ってください。",
    "dict_type": "{label}はオブジェクトで送ってください。",
    "model_type": "{label}はオブジェクトで送ってください。",
    "string_too_long": "{label}が長すぎます。",
    "too_long": "{label}の件数が多すぎます。",
}


def _message(err: dict) -> str:
    loc = [str(x) for x in err.get("loc", ()) if not isinstance(x, int)]
    field = next((x for x in loc if x in LABELS), loc[0] if loc else "")
    kind = err.get("type", "")
    for key, text in _MESSAGES.items():
        if kind == key or kind.startswith(key):
            return text.format(label=LABELS.get(field, field), field=field[:40])
    return f"{LABELS.get(field, field)}の値が正しくありません。"


def _check_chars(value: Any, field: str = "") -> None:
    if isinstance(value, str):
        if bad_chars(value, multiline=field in MULTILINE):
            raise JudgeappError(
                f"{LABELS.get(field, field or '入力')}に使えない文字（制御文字）が含まれています。",
                400,
                "bad_char",
            )
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_chars(k, field)
            _check_chars(v, k if field == "" else field)
    elif isinstance(value, list):
        for v in value:
            _check_chars(v, field)


def parse(model: type[Body], data: object) -> dict:
    """`data` checked against `model`; the fields that were sent, as a dict for the domain functions."""
    if not isinstance(data, dict):
        raise JudgeappError(
            "JSON オブジェクトを送ってください（Content-Type: application/json）。", 400, "bad_json"
        )
    _check_chars(data)
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        raise JudgeappError(_message(exc.errors()[0]), 400, "bad_field") from None
    return parsed.model_dump(exclude_unset=True)
