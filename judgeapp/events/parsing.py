"""Reading what a person sent: ids, text, numbers, yes/no, passcodes. Public, so the pages and the API parse
the same way; each helper refuses a wrong type or a bad character with a Japanese message (400) and never
repairs input silently.
"""

from __future__ import annotations

import unicodedata

from ..errors import JudgeappError

MAX_ID = 2**31 - 1
MIN_PASSCODE = 8  # everyone
MIN_PASSCODE_LEADS = 12  # the organizer and head judges (OWASP ASVS 2.1.1)
MAX_PASSCODE = 200
LEAD_ROLES = ("organizer", "head_judge")


def parse_id(value: object) -> int:
    """A row id from a URL or a body: 1 … 2³¹−1, else -1 (which no row has)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return -1
    try:
        n = int(str(value).strip())
    except ValueError:
        return -1
    return n if 1 <= n <= MAX_ID else -1


def bad_chars(text: str, multiline: bool = False) -> bool:
    """True when `text` holds NUL or another control character (a newline and a tab only where lines are)."""
    allowed = "\n\t\r" if multiline else ""
    return any(unicodedata.category(ch) in ("Cc", "Cs") and ch not in allowed for ch in text)


def refuse_bad_chars(text: str, what: str, multiline: bool = False) -> None:
    if bad_chars(text, multiline):
        raise JudgeappError(
            f"{what}に使えない文字（制御文字）が含まれています。消してからもう一度送ってください。",
            400,
            "bad_char",
        )


def clean_text(value: object, what: str, max_len: int, required: bool = True, multiline: bool = False) -> str:
    """Text trimmed; a number is taken as its digits. Anything else, or a control character: 400. A name or a
    number is folded (NFKC: ｶｰﾄﾞ, ＡＢＣ and １ as カード, ABC and 1, to be found again); a judge's own account
    (`multiline`: facts, notes, reasons) is kept as written (NFC only: the same characters, composed)."""
    if value is None:
        value = ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise JudgeappError(f"{what}は文字で入力してください。", 400, "bad_type")
    s = unicodedata.normalize("NFC" if multiline else "NFKC", str(value)).strip()
    refuse_bad_chars(s, what, multiline)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    if required and not s:
        raise JudgeappError(f"{what}を入力してください。", 400, "missing_field")
    if len(s) > max_len:
        raise JudgeappError(f"{what}は {max_len} 文字までです。", 400, "too_long")
    return s


def parse_int(value: object, what: str, lo: int, hi: int) -> int:
    """An integer lo … hi, from a number or its digits (never a bool or a float)."""
    msg = f"{what}は {lo} から {hi} の数字で入力してください。"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise JudgeappError(msg, 400, "bad_number")
    try:
        n = int(str(value).strip())
    except ValueError:
        raise JudgeappError(msg, 400, "bad_number") from None
    if not lo <= n <= hi:
        raise JudgeappError(msg, 400, "bad_number")
    return n


TRUE_WORDS, FALSE_WORDS = ("true", "1", "on", "yes"), ("false", "0", "off", "no")


def parse_bool(value: object, what: str) -> bool:
    """true/false (JSON), or a form's "true"/"false"/"on"/"1"/"0". Anything else is refused, not guessed."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise JudgeappError(f"{what}は true か false で指定してください。", 400, "bad_type")


def min_passcode(role: str) -> int:
    return MIN_PASSCODE_LEADS if role in LEAD_ROLES else MIN_PASSCODE


def parse_passcode(value: object, role: str) -> str:
    """A new passcode: text, long enough for the role (12 for the organizer and head judges, 8 otherwise)."""
    need = min_passcode(role)
    if not isinstance(value, str):
        raise JudgeappError("パスコードは文字で入力してください。", 400, "bad_type")
    refuse_bad_chars(value, "パスコード")
    if len(value) < need or len(value) > MAX_PASSCODE:
        raise JudgeappError(
            f"パスコードは {need} 文字以上（{MAX_PASSCODE} 文字まで）にしてください。", 400, "weak_passcode"
        )
    return value
