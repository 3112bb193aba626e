"""The audit log in Japanese sentences: who did what to whom, when and why.

A pure function of the audit rows (and the names of players and staff, looked up by the caller): nothing here
reads the database, so the same rows always read the same way, on the page and in the exports. An action
this module does not know is still shown, as its code, never hidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

OUTCOMES = {"uphold": "維持", "change": "変更", "overturn": "取消"}


@dataclass(frozen=True)
class Names:
    """Who the ids in the audit rows are: {player id: "番号 名前"}, {staff id: "名前（役割）"}."""

    players: Mapping[int, str]
    staff: Mapping[int, str]

    def player(self, pid: object) -> str:
        try:
            return self.players.get(int(pid), f"選手 #{pid}")
        except (TypeError, ValueError):
            return "選手"

    def member(self, sid: object) -> str:
        try:
            return self.staff.get(int(sid), f"スタッフ #{sid}")
        except (TypeError, ValueError):
            return "スタッフ"


def _target_id(target: str) -> str:
    return target.partition(":")[2]


def _reason(text: object) -> str:
    return f"理由：「{text}」" if text else ""


def sentence(action: str, target: str, detail: Mapping, actor: str | None, names: Names) -> str:
    """One audit row as a sentence (without the time, which the page shows beside it)."""
    who = actor or "（サインインしていない人）"
    d = detail or {}
    tid = _target_id(target)
    if action == "event.create":
        return f"{who}が大会「{d.get('name', '')}」を作成しました（{d.get('rounds', '?')} ラウンド）。"
    if action == "event.update":
        before, after = d.get("before") or {}, d.get("after") or {}
        changed = [k for k in after if before.get(k) != after.get(k) and k not in ("url", "level_label")]
        labels = {
            "name": "大会名",
            "date": "開催日",
            "level": "レベル",
            "tier": "階層レベル",
            "rounds": "ラウンド数",
        }
        parts = [f"{labels.get(k, k)}を {before.get(k)} から {after.get(k)} に" for k in changed]
        return f"{who}が大会の設定を変更しました：{'、'.join(parts) or '変更なし'}。"
    if action == "event.round":
        return f"{who}が現在のラウンドを第 {d.get('after')} ラウンドにしました（前：{d.get('before') or 'なし'}）。"
    if action == "staff.add":
        return f"{who}がスタッフ「{d.get('name', '')}」を{d.get('role_label') or d.get('role', '')}として追加しました。"
    if action == "staff.grants":
        after = "、".join(d.get("after") or []) or "なし"
        return f"{who}が{names.member(tid)}の権限を「{after}」にしました。"
    if action == "staff.update":
        parts = []
        if d.get("passcode"):
            parts.append("パスコードを再設定")
        if "active" in d:
            parts.append("有効に" if d["active"] else "無効に")
        return f"{who}が{names.member(tid)}を{'・'.join(parts) or '変更'}しました。"
    if action == "staff.token":
        return f"{who}が自分の API トークンを発行しました。"
    if action == "signin":
        return f"{who}がサインインしました。"
    if action == "signin.failed":
        return f"{names.member(tid)}としてのサインインが失敗しました（{d.get('failures', '?')} 回目）。"
    if action == "player.add":
        players = d.get("players") or []
        shown = "、".join(f"{p.get('number')} {p.get('name')}" for p in players[:3])
        more = f" ほか {len(players) - 3} 人" if len(players) > 3 else ""
        return f"{who}が選手 {len(players)} 人を登録しました（{shown}{more}）。"
    if action == "seats.set":
        return f"{who}が第 {d.get('round')} ラウンドの卓番号を {d.get('count', '?')} 人分登録しました。"
    if action == "penalty.record":
        inf_name = d.get("infraction_name") or d.get("infraction")
        inf = f"違反「{inf_name}」で" if inf_name else ""
        removed = "。この記録で選手は以後の対戦に出られなくなりました" if d.get("removed_now") else ""
        return (
            f"{who}が{names.player(d.get('player'))}に{inf}【{d.get('level', '')}】を記録しました"
            f"（第 {d.get('round', '?')} ラウンド、記録 #{tid}）{removed}。"
        )
    if action == "ruling.record":
        return (
            f"{who}が{names.player(d.get('player'))}にヘッドジャッジの判断（規定にない）として"
            f"「{d.get('ruling', '')}」を記録しました（第 {d.get('round', '?')} ラウンド、記録 #{tid}）。"
        )
    if action == "penalty.void":
        return f"{who}が記録 #{tid} を無効にしました。{_reason(d.get('reason'))}"
    if action == "appeal.file":
        return f"{who}が記録 #{tid} への上告を受け付けました。{_reason(d.get('grounds'))}"
    if action == "appeal.decide":
        outcome = OUTCOMES.get(d.get("outcome"), d.get("outcome"))
        level = f"（【{d['level']}】に）" if d.get("level") else ""
        return f"{who}が記録 #{tid} への上告を裁定しました：{outcome}{level}。{_reason(d.get('reason'))}"
    if action == "notice.ack":
        return f"{who}が通知 #{tid} を確認しました。"
    return f"{who}：{action} {target}"
