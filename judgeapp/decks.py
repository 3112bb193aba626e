"""Deck-list check against each game's construction rules (`infractions/<game>/deck.yaml`).

The rules are data, each citing its section; the card lists (ban lists, the restricted list, the banned
combination) are checked at load time against the lists in the cited corpus section, so the corpus stays the
one source of truth. There is no card database: names are compared as a judge would (width, middle dot and
brackets forgiven), unknown names are fine, and a name close to a listed card is pointed out.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from .corpus import Corpus
from .errors import DeckError
from .policy import Citation, HandOff, Policies, Strict, check_citations, error_location, game_folders
from .textnorm import squash
from .yamlload import DuplicateKeyError, load_yaml

MAX_LINES = 500
MAX_CHARS = 50_000
MAX_COUNT = 99
MAIN = "main"


class DeckRule(Strict):
    """One construction rule.

    count: the zone holds between `min` and `max` cards.     copies: at most `max` of one name in the zone.
    banned: none of `cards` anywhere.                       limited: at most `max` of each of `cards`.
    banned_together: no pair of `pairs` together.           no_zone: the zone may not be used.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: Literal["count", "copies", "banned", "limited", "banned_together", "no_zone"]
    zone: str = MAIN
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    cards: list[str] = []
    pairs: list[list[str]] = []
    list_section: str | None = None  # the corpus section whose list `cards`/`pairs` mirror
    rule: str = Field(min_length=1)  # the rule in plain words, shown with each problem
    infraction: str | None = None  # the policy's infraction for a deck that breaks it (wizard link)
    citations: list[Citation] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self):
        k = self.kind
        if k == "count" and self.min is None and self.max is None:
            raise ValueError("count needs min or max")
        if k in ("copies", "limited") and self.max is None:
            raise ValueError(f"{k} needs max")
        if k in ("banned", "limited") and not self.cards:
            raise ValueError(f"{k} needs cards")
        if k == "banned_together" and (not self.pairs or any(len(p) < 2 for p in self.pairs)):
            raise ValueError("banned_together needs pairs of two or more cards")
        return self


class DeckFile(Strict):
    """`deck.yaml`."""

    format: str = Field(min_length=1)  # which format the rules are for, in the text's words
    zones: dict[str, list[str]]  # zone id → the headings a judge may write for it (# 超次元)
    unchecked: list[str] = []  # what the text does not state (shown on every result)
    caveat: HandOff | None = None  # what the text is (an unofficial draft), quoted; shown on the deck page
    rules: list[DeckRule]


@dataclass
class DeckRules:
    game: str
    file: DeckFile
    listed: dict[str, str] = field(default_factory=dict)  # squashed name → the name as listed


def corpus_list(corpus: Corpus, section_id: str) -> list[str]:
    """The list items of a section, as a card list: 《name》 items, or the text after 「:」."""
    section = corpus.sections[section_id]
    items = []
    for line in section.markdown.splitlines():
        m = re.match(r"^\s*[-*]\s+(.*)$", line)
        if not m:
            continue
        item = m.group(1).strip()
        names = re.findall(r"《([^》]+)》", item)
        if names:
            items.append("＋".join(names))
        elif ":" in item or "：" in item:
            items.append(re.split(r"[:：]", item, maxsplit=1)[1].strip())
    return items


def load_deck_rules(
    directory: str | Path | Sequence[str | Path],
    corpus: Corpus,
    policies: Policies | None,
    problems: list[str],
) -> dict[str, DeckRules]:
    """Each game's `deck.yaml` (of each infraction folder given), checked against the corpus; problems are
    appended to `problems` as 'file: key: message'."""
    out: dict[str, DeckRules] = {}
    for path in [f / "deck.yaml" for f in game_folders(directory, []) if (f / "deck.yaml").exists()]:
        game = path.parent.name
        try:
            df = DeckFile.model_validate(load_yaml(path))
        except DuplicateKeyError as exc:
            problems.append(str(exc))
            continue
        except yaml.YAMLError as exc:
            problems.append(f"{path}: not valid YAML: {exc}".replace("\n", " "))
            continue
        except ValidationError as exc:
            problems.extend(f"{path}: {error_location(e['loc'])}: {e['msg']}" for e in exc.errors())
            continue
        if MAIN not in df.zones:
            problems.append(f"{path}: zones: needs '{MAIN}'")
        if df.caveat is not None:
            check_citations(f"{path}: caveat", df.caveat.citations, corpus, game, problems)
        policy = policies.get(game) if policies else None
        listed: dict[str, str] = {}
        for i, r in enumerate(df.rules):
            where = f"{path}: rules[{i}]"
            check_citations(where, r.citations, corpus, game, problems)
            if r.zone not in df.zones:
                problems.append(f"{where}.zone: unknown zone '{r.zone}' (zones: {', '.join(df.zones)})")
            if r.infraction and (policy is None or r.infraction not in policy.infractions):
                problems.append(f"{where}.infraction: unknown infraction '{r.infraction}'")
            if r.list_section:
                if r.list_section not in corpus.sections:
                    problems.append(f"{where}.list_section: no section '{r.list_section}'")
                else:
                    ours = ["＋".join(p) for p in r.pairs] if r.kind == "banned_together" else list(r.cards)
                    theirs = corpus_list(corpus, r.list_section)
                    if [squash(x) for x in ours] != [squash(x) for x in theirs]:
                        missing = [x for x in theirs if squash(x) not in {squash(y) for y in ours}]
                        extra = [x for x in ours if squash(x) not in {squash(y) for y in theirs}]
                        problems.append(
                            f"{where}.cards: differs from the list in {r.list_section}"
                            f" (missing: {missing or '-'}; not in the corpus: {extra or '-'})"
                        )
            for name in r.cards + [n for p in r.pairs for n in p]:
                listed[squash(name)] = name
        out[game] = DeckRules(game=game, file=df, listed=listed)
    return out


# --- parsing what a judge pastes --------------------------------------------------------------------------

_COUNT_FIRST = re.compile(r"^(\d+)\s*(?:枚|x|×|\*)?\s+(.+)$|^(\d+)\s*(?:枚|x|×|\*)\s*(.+)$", re.I)
_COUNT_LAST = re.compile(r"^(.+?)\s*(?:x|×|\*)\s*(\d+)\s*枚?$|^(.+?)\s*(\d+)\s*枚$|^(.+?)\s+(\d+)$", re.I)


@dataclass
class Entry:
    line: int
    zone: str
    name: str
    count: int


def parse(text: str, rules: DeckRules) -> list[Entry]:
    """One card a line (4 カード名 / カード名 x4 / カード名 ×4 / カード名 4枚); `# 超次元` starts a zone."""
    if not isinstance(text, str) or not text.strip():
        raise DeckError("デッキリストが空です。1 行に 1 種類、「4 カード名」の形で入力してください。")
    if "\x00" in text or len(text) > MAX_CHARS:
        raise DeckError("デッキリストとして読めません（文字以外のデータか、長すぎます）。")
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise DeckError(f"デッキリストが長すぎます（{len(lines)} 行）。{MAX_LINES} 行までにしてください。")
    aliases = {squash(a): z for z, names in rules.file.zones.items() for a in names + [z]}
    zone = MAIN
    entries: list[Entry] = []
    for n, raw in enumerate(lines, 1):
        line = unicodedata.normalize("NFKC", raw).strip()
        if not line or line.startswith("//"):
            continue
        if line.startswith("#"):
            key = squash(line.lstrip("#"))
            if key not in aliases:
                known = "、".join(f"# {names[0] if names else z}" for z, names in rules.file.zones.items())
                raise DeckError(
                    f"{n} 行目「{raw.strip()[:40]}」: このゲームのデッキリストにない区分です。使えるのは {known} です。"
                )
            zone = aliases[key]
            continue
        m = _COUNT_FIRST.match(line)
        if m:
            count, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        else:
            m = _COUNT_LAST.match(line)
            if not m:
                raise DeckError(
                    f"{n} 行目「{raw.strip()[:40]}」: 枚数が読めません。「4 カード名」や「カード名 ×4」の形で書いてください。"
                )
            groups = [g for g in m.groups() if g is not None]
            name, count = groups[0], groups[1]
        name = name.strip().strip("《》「」[]").strip()
        count_i = int(count)
        if not 1 <= count_i <= MAX_COUNT:
            raise DeckError(f"{n} 行目「{raw.strip()[:40]}」: 枚数は 1 から {MAX_COUNT} で書いてください。")
        if not squash(name):
            raise DeckError(f"{n} 行目: カード名がありません。")
        entries.append(Entry(line=n, zone=zone, name=name[:100], count=count_i))
    if not entries:
        raise DeckError("カードが 1 枚もありません。1 行に 1 種類、「4 カード名」の形で入力してください。")
    return entries


# --- checking ----------------------------------------------------------------------------------------------


@dataclass
class Problem:
    code: str
    message: str
    citations: list[str]
    rule: str
    infraction: str | None = None
    cards: list[str] = field(default_factory=list)


@dataclass
class Report:
    game: str
    legal: bool
    cards: int
    zones: dict[str, int]
    problems: list[Problem]
    notices: list[str]
    unchecked: list[str]


def _display(name: str) -> str:
    return f"《{name}》"


def check(rules: DeckRules, text: str) -> Report:
    """Parse a pasted deck list (DeckError when it cannot be read) and check it against the game's rules."""
    entries = parse(text, rules)
    zones: dict[str, int] = {}
    # name key → (display name, {zone: count})
    names: dict[str, tuple[str, dict[str, int]]] = {}
    for e in entries:
        zones[e.zone] = zones.get(e.zone, 0) + e.count
        key = squash(e.name)
        display = rules.listed.get(key, e.name)
        names.setdefault(key, (display, {}))[1][e.zone] = (
            names.get(key, (display, {}))[1].get(e.zone, 0) + e.count
        )
    problems: list[Problem] = []

    def add(r: DeckRule, code: str, message: str, cards: Iterable[str] = ()) -> None:
        problems.append(
            Problem(
                code=code,
                message=message,
                citations=[c.section for c in r.citations],
                rule=r.rule,
                infraction=r.infraction,
                cards=list(cards),
            )
        )

    zone_label = {z: (a[0] if a else z) for z, a in rules.file.zones.items()}
    zone_label[MAIN] = rules.file.zones[MAIN][0] if rules.file.zones.get(MAIN) else "デッキ"
    for r in rules.file.rules:
        zl = zone_label.get(r.zone, r.zone)
        if r.kind == "count":
            n = zones.get(r.zone, 0)
            if r.zone != MAIN and n == 0:
                continue
            if r.min is not None and n < r.min:
                exact = r.min == r.max
                add(
                    r,
                    "too_few",
                    f"{zl}が {n} 枚です。{r.min} 枚{'ちょうど' if exact else '以上'}でなければなりません。",
                )
            elif r.max is not None and n > r.max:
                exact = r.min == r.max
                add(
                    r,
                    "too_many",
                    f"{zl}が {n} 枚です。{r.max} 枚{'ちょうど' if exact else 'まで'}でなければなりません。",
                )
        elif r.kind == "copies":
            for display, per_zone in names.values():
                n = per_zone.get(r.zone, 0)
                if n > r.max:
                    add(
                        r,
                        "too_many_copies",
                        f"{_display(display)}が{zl}に {n} 枚あります。同名のカードは {r.max} 枚までです。",
                        [display],
                    )
        elif r.kind == "banned":
            for card in r.cards:
                found = names.get(squash(card))
                if found:
                    add(r, "banned_card", f"{_display(card)}はデッキに入れられません（{r.rule}）。", [card])
        elif r.kind == "limited":
            for card in r.cards:
                found = names.get(squash(card))
                if found and sum(found[1].values()) > r.max:
                    add(
                        r,
                        "over_limit",
                        f"{_display(card)}が {sum(found[1].values())} 枚あります。{r.max} 枚までです（{r.rule}）。",
                        [card],
                    )
        elif r.kind == "banned_together":
            for pair in r.pairs:
                if all(squash(c) in names for c in pair):
                    add(
                        r,
                        "banned_combination",
                        "＋".join(_display(c) for c in pair) + f"は同じデッキに入れられません（{r.rule}）。",
                        pair,
                    )
        elif r.kind == "no_zone":
            if zones.get(r.zone):
                add(r, "zone_not_allowed", f"{zl}は使えません（{r.rule}）。")

    notices: list[str] = []
    listed_keys = list(rules.listed)
    for key, (display, _) in names.items():
        if key in rules.listed or len(key) < 3:
            continue
        close = difflib.get_close_matches(key, listed_keys, n=1, cutoff=0.8)
        if not close:  # a short name typed for a listed card (ボルバルザーク → 無双竜機ボルバルザーク)
            close = [k for k in listed_keys if key in k and len(key) >= 0.4 * len(k)][:1]
        if close:
            notices.append(
                f"{_display(display)}は{_display(rules.listed[close[0]])}のことですか？ 規定のリストの名前と一致しないため、別のカードとして数えました。"
            )
    return Report(
        game=rules.game,
        legal=not problems,
        cards=zones.get(MAIN, 0),
        zones=zones,
        problems=problems,
        notices=notices,
        unchecked=list(rules.file.unchecked),
    )


def report_json(rep: Report, url_for_infraction: Callable[[str], str]) -> dict:
    """The API's JSON for a report; `url_for_infraction` turns an infraction id into its wizard URL."""
    return {
        "game": rep.game,
        "legal": rep.legal,
        "cards": rep.cards,
        "zones": rep.zones,
        "problems": [
            {
                "code": p.code,
                "message": p.message,
                "citations": p.citations,
                "rule": p.rule,
                "cards": p.cards,
                "infraction": url_for_infraction(p.infraction) if p.infraction else None,
            }
            for p in rep.problems
        ],
        "notices": rep.notices,
        "needs_review": bool(rep.notices),
        "unchecked": rep.unchecked,
        "note": "カードのデータベースはありません。規定のリストにない名前は、そのまま数えています。",
    }
