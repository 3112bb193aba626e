"""The audit log: every change to an event's records or staff writes one entry, in the same transaction."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from .db import Database, run
from .models import AuditEntry, Staff, utcnow


def audit(s: Session, event_id: int, staff: Staff | None, action: str, target: str, **detail) -> None:
    """Add an entry to the write transaction `s` (it commits or rolls back with the change)."""
    s.add(
        AuditEntry(
            event_id=event_id,
            staff_id=staff.id if staff else None,
            action=action,
            target=target,
            detail=detail,
        )
    )


def audit_row(s: Session, event_id: int, staff: Staff | None, action: str, target: str, **detail) -> None:
    """`audit` as one INSERT on the transaction's connection (a Session's or a Core Connection), without the
    ORM's unit of work (recording)."""
    run(
        s.connection() if isinstance(s, Session) else s,
        _INSERT,
        {
            "event_id": event_id,
            "staff_id": staff.id if staff else None,
            "action": action,
            "target": target,
            "detail": detail,
            "created_at": utcnow(),
        },
    )


_INSERT = insert(AuditEntry.__table__)


def audit_log(db: Database, event_id: int, limit: int = 500) -> list[AuditEntry]:
    """The newest entries first, with who did each."""
    with db.reader() as s:
        entries = list(
            s.scalars(
                select(AuditEntry)
                .where(AuditEntry.event_id == event_id)
                .order_by(AuditEntry.id.desc())
                .limit(limit)
            )
        )
        for e in entries:
            _ = e.staff
        return entries
