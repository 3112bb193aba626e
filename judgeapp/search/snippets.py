"""Snippets: where a query's words are in a section's text, and the window shown around them."""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


def span_end(span: tuple[int, int]) -> int:
    return span[1]


def best_window(spans: list[tuple[int, int]], width: int) -> int:
    """The first mark's start (spans in order of their start) from which the window `[start - 20, start +
    width - 20)` holds the most marks' starts: the first such, as `max` gives it. Both ends move forward only
    (the marks before the window, those before its end), so it is one pass, not two binary searches a mark."""
    n = len(spans)
    best, most, lo, hi = spans[0][0], -1, 0, 0
    for a, _ in spans:
        while spans[lo][0] < a - 20:  # (bisect_left(starts, a - 20))
            lo += 1
        while hi < n and spans[hi][0] < a + width - 20:  # (bisect_left(starts, a + width - 20))
            hi += 1
        if hi - lo > most:
            best, most = a, hi - lo
    return best


def escape_html(text: str) -> str:
    """`markupsafe.escape`'s text (the same five characters, the same entities), without making a Markup."""
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return text.replace('"', "&#34;").replace("'", "&#39;")
    return text


_GAP = frozenset("・･ー")  # what a needle skips between its characters (with white space)
_GAP_RUNS = re.compile(r"[・･ー\s]+")  # (`\s` is `str.isspace`'s white space: both are Py_UNICODE_ISSPACE)


class Gapless:
    """A folded text without what a needle skips (`_GAP`, white space), and the way back to the text's
    places: a needle's match is then one `str.find` in C, not a Python step per place its first character
    is found (made once per section, on first use)."""

    __slots__ = ("text", "keys", "removed")

    def __init__(self, text: str):
        self.text = _GAP_RUNS.sub("", text)
        # each run of gaps: where it sits in the gapless text, and how many characters precede it removed
        self.keys: list[int] = []
        self.removed: list[int] = [0]
        for m in _GAP_RUNS.finditer(text):
            self.keys.append(m.start() - self.removed[-1])
            self.removed.append(self.removed[-1] + m.end() - m.start())

    def place(self, at: int) -> int:
        """The text's place of the gapless text's character `at`."""
        return at + self.removed[bisect.bisect_right(self.keys, at)]


class Marker:
    """Where the snippets mark a query's matched terms: the spans `re.finditer` would give for the regular
    expression `a|b|…` of the branches, in their order (a surface as written; a needle, its characters with
    any middle dots, long-vowel marks and spaces between them), without compiling one for each query
    (compiling took longer than the rest of a snippet). As the expression does, from left to right: at each
    place the first branch that matches there, then on from its end. A needle's characters are squashed
    (`textnorm.squash`), none of them a gap, so each match is found without going back."""

    def __init__(self, branches: list[tuple[str, bool]]):
        self.needles = any(needle for _, needle in branches)
        # how each branch is found, decided once a query rather than once a hit: (rank, text, how), how
        # 0 as written, 1 a needle without gaps of its own (in the gapless text, when there is one), 2 a
        # needle stepped through; empty branches left out
        self._plan = [
            (rank, branch, 0 if not needle or len(branch) == 1 else 2 if _GAP_RUNS.search(branch) else 1)
            for rank, (branch, needle) in enumerate(branches)
            if branch
        ]

    def spans(self, text: str, gapless: Gapless | None = None) -> list[tuple[int, int]]:
        """`gapless`, the text's `Gapless` when the caller keeps one."""
        found: dict[int, tuple[int, int]] = {}  # start → (the first branch that matches there, its end)
        for rank, branch, how in self._plan:
            if how == 0:  # (a needle of one character is that character)
                at = text.find(branch)
                while at >= 0:
                    if at not in found:  # (a branch before this one matches there: it wins)
                        found[at] = (rank, at + len(branch))
                    at = text.find(branch, at + 1)
                continue
            if how == 1 and gapless is not None:
                # The needle's characters, gaps skipped between them: the needle in the gapless text. Its
                # match starts at its first character's place and ends after its last one's.
                flat, last = gapless.text, len(branch) - 1
                at = flat.find(branch)
                while at >= 0:
                    start = gapless.place(at)
                    if start not in found:
                        found[start] = (rank, gapless.place(at + last) + 1)
                    at = flat.find(branch, at + 1)
                continue
            first, second = branch[0], branch[1:2]
            at = text.find(first)
            while at >= 0:
                after = text[at + 1 : at + 2]  # (most places fail here: not the second character, no gap)
                if at not in found and (after == second or after in _GAP or after.isspace()):
                    end = self._needle_end(text, at, branch)
                    if end > at:
                        found[at] = (rank, end)
                at = text.find(first, at + 1)
        out, pos = [], 0
        for at in sorted(found):
            if at >= pos:
                end = found[at][1]
                out.append((at, end))
                pos = end
        return out

    @staticmethod
    def _needle_end(text: str, at: int, needle: str) -> int:
        """Where the needle's match that starts at `at` ends (`at` when none does)."""
        i, n = at + 1, len(text)
        for ch in needle[1:]:
            while i < n and (text[i] in _GAP or text[i].isspace()):
                i += 1
            if i >= n or text[i] != ch:
                return at
            i += 1
        return i
