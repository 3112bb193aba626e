"""The games a judge's query names in its words (リセ 遅刻, DM 先攻, 大会規定 奇数人数): each game's names from its
data (`Game.names`: `_game.yaml`'s name, short name and aliases), read only as whole words of the query."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..textnorm import HIRAGANA_RE, fold
from .analysis import CHUNK_BREAK, KANJI_RE

# Words that ask about a game as a whole once its name is read (リセのルール, イジンデンについて), besides the
# question and courtesy words (`QUERY_STOP`): with nothing else, the game's own text is the answer
# (`SearchIndex._asks_more`, static/offline-search.js).
ABOUT_A_GAME = frozenset(
    fold(w)
    for w in (
        "ルール", "規定", "規約", "ゲーム", "ガイドライン", "付く", "就く", "ツク", "全部", "一覧", "意味", "宜しい",
        "宜しく",
    )
)  # fmt: skip
# The same, as a judge types them after a name (the offline search has no dictionary: it takes these off the
# end of what follows the name before it looks for words, static/offline-search.js `asksMore`), longest first.
ASKING_TAILS = tuple(
    sorted(
        {
            "について", "のこと", "ってなに", "ってなん", "って何", "とは", "ですか", "ください", "下さい", "教えて",
            "おしえて", "どういう意味", "意味", "よろしく", "お願いします", "おねがいします", "できない", "できる",
            "わからない", "分からない", "する", "って", "のルール", "の規定", "を", "は", "の", "？", "ね", "よ", "宜しく",
            "お願い", "ほしい", "欲しい", "知りたい", "どんな", "どんなの", "なあに", "なんだっけ", "もらえますか",
            "です", "ってどんなゲーム", "どんなゲーム",
        },
        key=lambda t: (-len(t), t),
    )
)  # fmt: skip

_GAP = "[\\s・･]*"  # what may stand between a name's characters as typed (TCG 大会規定, デュエル・マスターズ)


def _script(ch: str) -> str:
    """The script a character is written in, as a name's edges are compared with their neighbours."""
    if not ch:
        return ""
    # (not ・ U+30FB: リセ・遅刻 names Lycee, the dot is a gap)
    if ch in "ーｰ" or "\u30a1" <= ch <= "\u30fa" or "\u30fc" <= ch <= "\u30ff" or "\uff66" <= ch <= "\uff9f":
        return "katakana"
    if ch.isascii() and ch.isalnum():
        return "latin"
    if KANJI_RE.match(ch):
        return "kanji"
    if "\u3041" <= ch <= "\u309f":
        return "hiragana"
    return ""


@dataclass(frozen=True)
class Named:
    """A game's name in a query: as typed (`text[start:end]`), the game, and where it ends with the particles
    after it (`text[start:through]`: DMで)."""

    name: str
    game: str
    start: int
    end: int
    through: int


class GameNames:
    """Each game's names (`games`: game id → the names a judge may type), read in a query as whole words only:
    a name that begins or ends in katakana or Latin letters not beside more of the same (リセ not in リセット,
    DM not in ADMIN), a name that begins or ends in kanji where SudachiPy begins or ends a word there (大会規定
    in 大会規定の, `bounds`), and never a name typed in hiragana (しっかりせず, とりせつ: no リセ)."""

    def __init__(
        self,
        games: dict[str, Iterable[str]],
        bounds: Callable[[str], tuple[set[int], set[int], set[int]]],
        hiragana_parts: bool = False,
    ):
        """`hiragana_parts`: a name typed in hiragana is read too where it is a whole part of the query, between
        spaces or punctuation (いじんでん 時間切れ; never inside other words: しっかりせず)."""
        names = []
        self._hiragana_parts = hiragana_parts
        for game, typed in games.items():
            for name in typed:
                chars = [c for c in fold(name) if not re.fullmatch(_GAP, c)]
                if len(chars) < 2 or HIRAGANA_RE.search(name):
                    continue  # (a name in hiragana is never read: the loader refuses such an alias)
                pattern = _GAP.join("ー?" if c == "ー" else re.escape(c) for c in chars)
                names.append((len(chars), re.compile(pattern), game))
        names.sort(key=lambda x: -x[0])  # the longer name first: 泉州DM before DM
        self._names = [(p, g) for _, p, g in names]
        self._bounds = bounds  # where SudachiPy begins a particle, and begins and ends a word, in a text

    def __bool__(self) -> bool:
        return bool(self._names)

    def read(self, text: str) -> list[Named]:
        """The games `text` (a cleaned query) names, in the order it names them (a longer name first where two
        overlap)."""
        if not self._names:
            return []
        folded = fold(text)  # (one character for one)
        found: list[Named] = []
        bounds: tuple[set[int], set[int], set[int]] | None = None
        for pattern, game in self._names:
            for m in pattern.finditer(folded):
                a, b = m.start(), m.end()
                if a == b or any(a < n.end and n.start < b for n in found):
                    continue
                if HIRAGANA_RE.search(text[a:b]):
                    if not (self._hiragana_parts and _whole_part(text, a, b)):
                        continue
                    found.append(Named(text[a:b], game, a, b, b))
                    continue
                first, last = _script(text[a]), _script(text[b - 1])
                before, after = _script(text[a - 1 : a]), _script(text[b : b + 1])
                if first in ("katakana", "latin") and before == first:
                    continue  # inside a longer word of the same script (リセット, ADMIN)
                if last in ("katakana", "latin") and after == last:
                    continue
                if first == "kanji" and text[a - 1 : a] == "の":
                    continue  # この大会の大会規定: the rules of a tournament, not the game's text
                if "kanji" in (first, last):
                    if bounds is None:
                        bounds = self._bounds(text)
                    if (first == "kanji" and a not in bounds[1]) or (last == "kanji" and b not in bounds[2]):
                        continue  # a kanji name inside a longer word
                found.append(Named(text[a:b], game, a, b, b))
        if found:  # the particles right after a name go with it (DMで暴言: で is no word of the rest)
            if bounds is None:
                bounds = self._bounds(text)
            particles, ends = bounds[0], sorted(bounds[2])
            for i, n in enumerate(found):
                end = n.end
                while end in particles:
                    end = next((e for e in ends if e > end), len(text))
                found[i] = Named(n.name, n.game, n.start, n.end, end)
        return sorted(found, key=lambda n: n.start)


def _whole_part(text: str, a: int, b: int) -> bool:
    """Whether `text[a:b]` is a whole part of the query: spaces or punctuation (or the query's ends) either side."""
    return (a == 0 or bool(CHUNK_BREAK.match(text[a - 1]))) and (
        b == len(text) or bool(CHUNK_BREAK.match(text[b]))
    )


def scope_names(games: dict[str, Iterable[str]], words: Callable[[str], list]) -> dict[str, list[str]]:
    """Each game's names that a search of that game leaves out of the query: there they narrow nothing
    (イジンデン 遅延, デュエマ サイドボード). Not a name made of what a text calls itself (大会規定: 規定, as
    `ABOUT_A_GAME` has it), which a question may be about (大会規定 店で勝手に変えてもええの)."""
    return {
        game: [n for n in typed if not any(w.forms[0] in ABOUT_A_GAME for w in words(n))]
        for game, typed in games.items()
    }


def without_names(text: str, named: Iterable[Named]) -> str:
    """The query without the names (the judge's scope, not words a section must hold)."""
    for n in sorted(named, key=lambda n: -n.start):
        text = text[: n.start] + " " + text[n.through :]
    return " ".join(text.split())
