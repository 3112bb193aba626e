"""Character folding shared by the search index, the query side and the snippet maker.

Judges type on phones: full- or half-width, hiragana or katakana, with or without the middle dot.
Everything that compares text folds both sides the same way here.

`fold()` keeps the string's length (one character in, one character out), so an offset found in a
folded text is an offset in the original: the snippet maker relies on that to mark the source's own
characters.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_HIRA_START, _HIRA_END = 0x3041, 0x3096
_KATA_OFFSET = 0x60

# Dashes that judges type where the text has the long-vowel mark (スリ-ブ, スリ－ブ, スリーブ).
_DASHES = "-‐‑‒–—―−ｰ~〜"
# Characters ignored when comparing card names and phrases character by character.
_GAP_CHARS = "・･ー\u3000 \t\r\n《》「」『』【】()（）[]［］〈〉<>＜＞\"'“”‘’、。,.，．:：;；!！?？/／"
_GAP_RE = re.compile("[" + re.escape(_GAP_CHARS + _DASHES) + "]+")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    norm = unicodedata.normalize("NFKC", ch)
    if len(norm) != 1:
        norm = ch  # keep the length: ligatures and the like stay as they are
    code = ord(norm)
    if _HIRA_START <= code <= _HIRA_END:
        norm = chr(code + _KATA_OFFSET)
    return norm.lower()


def fold(text: str) -> str:
    """Fold width, case and hiragana→katakana, one character for one."""
    return "".join(_fold_char(ch) for ch in text)


def clean_query(text: str, max_chars: int = 200) -> str:
    """What the search sees of what a judge typed: NFKC, no control characters, a bounded length."""
    text = _CONTROL_RE.sub(" ", text or "")
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())[:max_chars]


def squash(text: str) -> str:
    """Fold and drop the characters that do not matter when comparing names and phrases
    (middle dot, long-vowel mark, brackets, spaces, punctuation)."""
    return _GAP_RE.sub("", fold(text))


def squash_map(text: str) -> tuple[str, list[int]]:
    """`squash(text)` and, for each of its characters, the index of that character in `text`."""
    kept, where = [], []
    for i, ch in enumerate(text):
        f = _fold_char(ch)
        if not _GAP_RE.fullmatch(f):
            kept.append(f)
            where.append(i)
    return "".join(kept), where


def is_kana(text: str) -> bool:
    """True when the text is only hiragana/katakana (and the long-vowel mark)."""
    return bool(text) and all(
        "\u3041" <= ch <= "\u30ff" or ch in "ーｰ" or "\uff66" <= ch <= "\uff9f" for ch in text
    )


def to_katakana(text: str) -> str:
    """Hiragana to katakana after NFKC (half-width katakana become full-width)."""
    return "".join(
        chr(ord(ch) + _KATA_OFFSET) if _HIRA_START <= ord(ch) <= _HIRA_END else ch
        for ch in unicodedata.normalize("NFKC", text)
    )
