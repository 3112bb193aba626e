"""Who may do what with an event's records: one table, one check, and the questions templates ask
(`can_record`, `can_decide`, `can_void`, …) so that no page re-implements a rule.

Whether the person is still allowed to act at all (active, session or token still valid) is decided once, in
`staff.acting_staff_*`; these functions take the member that check returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import JudgeappError
from ..policy import issuer_text
from .models import ROLES, Staff

if TYPE_CHECKING:
    from ..policy import Consequence, Level
    from .records import HeadJudgeRuling, NoPenalty, RecordView

    Restrictable = Level | Consequence | NoPenalty | HeadJudgeRuling

ALL = frozenset(ROLES)
PERMISSIONS = {
    "read": ALL,
    "players": ALL,
    "record": frozenset({"organizer", "head_judge", "floor_judge"}),
    "appeal": frozenset({"organizer", "head_judge", "floor_judge"}),
    "decide": frozenset({"head_judge"}),
    "void": frozenset({"head_judge"}),
    "staff": frozenset({"organizer"}),
    "export": frozenset({"organizer", "head_judge", "scorekeeper"}),
    "round": frozenset({"organizer", "head_judge", "scorekeeper"}),
    "acknowledge": frozenset({"organizer", "head_judge"}),
    "ruling": frozenset({"organizer", "head_judge"}),
}
REFUSALS = {
    "read": "この大会の記録を見るにはサインインが必要です。",
    "players": "選手を登録する権限がありません。",
    "record": "ペナルティを記録できるのは主催者とジャッジです。",
    "appeal": "上告を記録できるのは主催者とジャッジです。",
    "decide": "上告を裁定できるのはヘッドジャッジだけです。",
    "void": "記録を無効にできるのはヘッドジャッジだけです。",
    "staff": "スタッフを管理できるのは主催者だけです。",
    "export": "記録を書き出せるのは主催者・ヘッドジャッジ・スコアキーパーです。",
    "round": "現在のラウンドを変えられるのは主催者・ヘッドジャッジ・スコアキーパーです。",
    "acknowledge": "通知を確認済みにできるのはヘッドジャッジと主催者です。",
    "ruling": "「ヘッドジャッジの判断（規定にない）」を記録できるのは、主催者と、主催者が許可したヘッドジャッジです。",
}


def can(staff: Staff | None, permission: str) -> bool:
    """The role allows it (the member is already known to be acting)."""
    return staff is not None and staff.role in PERMISSIONS[permission]


def require(staff: Staff | None, permission: str, event_id: int | None = None) -> Staff:
    """The acting member, if their role allows `permission` in this event; else 401/403 in Japanese."""
    if staff is None:
        raise JudgeappError(REFUSALS["read"], 401, "signin_required")
    if event_id is not None and staff.event_id != event_id:
        raise JudgeappError("この大会のスタッフとしてサインインしていません。", 403, "other_event")
    if not can(staff, permission):
        raise JudgeappError(REFUSALS[permission], 403, "forbidden")
    return staff


def may_give(staff: Staff, item: Restrictable) -> bool:
    """A level the text restricts: to the roles it names (`roles`), or to the organizer and those the
    organizer grants it (`grant`, イジンデン 【敗北】)."""
    roles = getattr(item, "roles", None)
    if roles and staff.role not in roles:
        return False
    grant = getattr(item, "grant", None)
    return not grant or staff.role == "organizer" or grant in (staff.grants or [])


def check_grant(staff: Staff, item: Restrictable) -> None:
    if not may_give(staff, item):
        roles = getattr(item, "roles", None)
        why = "" if roles and staff.role not in roles else "主催者の許可がありません。"
        raise JudgeappError(issuer_text(item.label, item.restricted_to) + why, 403, "not_granted")


# --- what the pages ask ----------------------------------------------------------------------------------


def may_rule(staff: Staff | None) -> bool:
    """A head judge's ruling where the text is silent: the organizer, or a head judge with the organizer's
    grant (head-judge-ruling)."""
    return can(staff, "ruling") and (staff.role == "organizer" or "head-judge-ruling" in (staff.grants or []))


def can_record(staff: Staff | None) -> bool:
    return can(staff, "record")


def can_export(staff: Staff | None) -> bool:
    return can(staff, "export")


def can_manage_staff(staff: Staff | None) -> bool:
    return can(staff, "staff")


def can_appeal(staff: Staff | None, view: RecordView) -> bool:
    """A judge may record a player's appeal of a ruling that is neither void nor already appealed."""
    return can(staff, "appeal") and view.void is None and view.appeal is None


def can_decide(staff: Staff | None, view: RecordView) -> bool:
    """The head judge decides an appeal that is waiting (not void, not decided)."""
    return can(staff, "decide") and view.appeal is not None and view.decision is None and view.void is None


def can_void(staff: Staff | None, view: RecordView) -> bool:
    """The head judge voids a record that is neither void nor appealed (an appeal is decided instead)."""
    return can(staff, "void") and view.void is None and view.appeal is None


TEMPLATE_HELPERS = {
    f.__name__: f
    for f in (
        can,
        may_rule,
        can_record,
        can_export,
        can_manage_staff,
        can_appeal,
        can_decide,
        can_void,
        may_give,
    )
}
