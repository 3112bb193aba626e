"""Each game's penalty policy, read from `infractions/<game>/` (docs/infractions.md).

A policy is data, not code: the levels the text names, its direct consequences, its accumulation and upgrade
rules, its infractions with their citations, the wizard's question tree and the training scenarios. It is
loaded strictly at start-up and by `judgeapp check`: unknown keys, duplicate ids, unknown levels, citations
whose quote does not stand in the cited section, unreachable or dead-end nodes and cycles all fail with the
file and the key named.

The standing engine (`standing()`) is the one place that says what a player's record comes to; the
consequence preview, the API, the event records and the tests all call it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .corpus import Corpus
from .errors import PolicyError, StandingError
from .yamlload import DuplicateKeyError, load_yaml

ID_RE = r"^[a-z0-9][a-z0-9-]*$"
RESERVED_NODE_IDS = {"at", "q", "next", "run", "a", "game", "infraction_id"}
NO_RULE_LABEL = "規定なし（ヘッドジャッジの判断）"
HAND_OFF_DEFAULT = "ヘッドジャッジに判断を仰いでください。"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Citation(Strict):
    """A section id and a short quote that must stand, word for word, in that section's own text."""

    section: str = Field(min_length=1)
    quote: str = Field(min_length=2, max_length=200)


def _needs_removal(item: Level | Consequence) -> Level | Consequence:
    if item.removes and not item.removal:
        raise ValueError("removes: true needs 'removal': what then happens, in the text's words")
    return item


StaffRole = Literal["organizer", "head_judge", "floor_judge", "scorekeeper"]  # events.models.ROLES


def _restriction_enforced(item: Level | Consequence) -> Level | Consequence:
    """A level the text restricts says how the app enforces it: the organizer's grant, or the roles."""
    if item.restricted_to and not (item.grant or item.roles):
        raise ValueError(
            f"restricted_to without grant or roles: the app could not enforce it ({item.restricted_to})"
        )
    if (item.grant or item.roles) and not item.restricted_to:
        raise ValueError("grant or roles without restricted_to: say who may issue it, in the text's words")
    return item


class Level(Strict):
    """A penalty level as the text names it (イジンデン ①【注意】, Lycee 注意 = N)."""

    id: str = Field(pattern=ID_RE)
    label: str = Field(min_length=1)  # as the text writes it: 注意
    mark: str = Field(min_length=1)  # short mark: N, ①
    description: str = Field(min_length=1)
    removes: bool = False  # the player takes no further part in the event (失格)
    removal: str | None = (
        None  # with removes: what then happens, in the text's words (shown, never a template's)
    )
    ends_game: bool = False  # the current game ends at once
    restricted_to: str | None = None  # who alone may issue it, in the text's words
    grant: str | None = Field(default=None, pattern=ID_RE)  # the permission the organizer grants for it
    # the event roles that may issue it, where the text names them (失格はヘッドジャッジだけ): enforced when
    # a record is made or an appeal changes a record to it
    roles: list[StaffRole] | None = Field(default=None, min_length=1)
    citations: list[Citation] = Field(min_length=1)

    _removal = model_validator(mode="after")(_needs_removal)
    _enforced = model_validator(mode="after")(_restriction_enforced)


class Consequence(Strict):
    """A direct consequence that is not a level: ゲームの敗北, 出場停止 1 年, 会場からの退出."""

    id: str = Field(pattern=ID_RE)
    label: str = Field(min_length=1)
    description: str = Field(min_length=1)
    removes: bool = False
    removal: str | None = None  # with removes: what then happens, in the text's words
    result: bool = (
        False  # a result the text states (不戦敗 after a drop), not a penalty: never recorded or counted
    )
    # the text says it *may* be issued (「できます」, tcg-taikai 3b): shown and returned beside the label, so the
    # answer never reads as a rule; in plain words, who decides whether and how long
    may: str | None = None
    citations: list[Citation] = Field(min_length=1)

    _removal = model_validator(mode="after")(_needs_removal)


def issuer_text(label: str, who: str) -> str:
    """Who alone may issue a level, as every answer, outcome and refusal says it (イジンデン's 【敗北】)."""
    return f"【{label}】を与えられるのは{who}です。"


class HandOff(Strict):
    """Who decides what the text leaves open, in the policy's words (tcg-taikai: no head judge in 一般)."""

    text: str = Field(min_length=1)
    citations: list[Citation] = []


class Rule(Strict):
    """An accumulation or upgrade rule.

    converts: every `count` of `level` count as one of `to` (Lycee: 注意 2 = 警告 1).
    removes: reaching `count` of `level` (after conversions) removes the player (Lycee: 警告 2).
    upgrade: the judge *may* upgrade to one of `to_any` (イジンデン); `count` is left out where the text gives
    no number (「何度も」): the offer then comes with every repeat, showing the earlier records.
    """

    id: str = Field(pattern=ID_RE)
    kind: Literal["converts", "removes", "upgrade"]
    level: str
    count: int | None = Field(default=None, ge=1, le=10)
    to: str | None = None
    to_any: list[str] = []
    automatic: bool
    text: str = Field(min_length=1)  # the rule in plain words
    removal: str | None = None  # kind removes: what then happens, in the text's words
    consequence: str | None = (
        None  # kind removes: the consequence it leads to (Lycee: トーナメントからの除外)
    )
    keywords: list[str] = []  # judges' words for the situation lookup
    citations: list[Citation] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self):
        if self.kind != "upgrade" and self.count is None:
            raise ValueError(f"{self.kind} needs 'count'")
        if self.kind == "removes" and not self.removal:
            raise ValueError("removes needs 'removal': what then happens, in the text's words")
        if self.kind == "converts" and (not self.to or self.to_any):
            raise ValueError("converts needs 'to' (one level) and no 'to_any'")
        if self.kind == "upgrade" and (not self.to_any or self.to):
            raise ValueError("upgrade needs 'to_any' (levels) and no 'to'")
        if self.kind == "removes" and (self.to or self.to_any):
            raise ValueError("removes takes neither 'to' nor 'to_any'")
        if self.kind == "upgrade" and self.automatic:
            raise ValueError("an upgrade the text leaves to the judge cannot be automatic")
        return self


class Infraction(Strict):
    """A situation and what the text prescribes for it."""

    id: str = Field(pattern=ID_RE)
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    keywords: list[str] = []  # judges' words for the situation lookup
    penalty: str | None  # a level id, a consequence id, or null where the text prescribes none
    discretion: bool  # the text leaves the level (or whether to penalise) to the judge
    discretion_note: str | None = None  # what is left to the judge, in plain words
    head_judge: bool = False  # the text decides nothing: the decision goes to the head judge
    procedure: bool = False  # not a penalty: the text prescribes a procedure (time-out, a drop), see remedy
    remedy: str | None = None  # what the judge does at the table
    also: list[str] = []  # what else happens, in plain words
    also_consequences: list[str] = []  # consequence ids that follow as well
    citations: list[Citation] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self):
        if self.penalty is None and not (self.discretion or self.head_judge or self.procedure):
            raise ValueError("with no penalty, say discretion, head_judge or procedure: true")
        if self.procedure and (self.penalty is not None or not self.remedy):
            raise ValueError("procedure: true takes no penalty and needs the remedy (the procedure)")
        if (self.discretion or self.head_judge) and not self.discretion_note:
            raise ValueError("discretion_note: say in plain words what the text leaves to the judge")
        return self


class Answer(Strict):
    id: str = Field(pattern=ID_RE)
    label: str = Field(min_length=1)
    hint: str | None = None
    next: str | None = None  # another node's id
    outcome: str | None = None  # an infraction id

    @model_validator(mode="after")
    def _one_target(self):
        if (self.next is None) == (self.outcome is None):
            raise ValueError("an answer leads either to 'next' (a node) or to 'outcome' (an infraction)")
        return self


class Node(Strict):
    id: str = Field(pattern=ID_RE)
    question: str = Field(min_length=1)
    help: str | None = None
    answers: list[Answer] = Field(min_length=1)


class WizardFile(Strict):
    """`wizard.yaml`: the question tree, from `start` to infractions."""

    start: str
    nodes: list[Node] = Field(min_length=1)


class Tiers(Strict):
    """The tiers (levels of play) an event of this game is numbered by, as the text defines them
    (tcg-taikai 1c-ii: 階層レベル 1 is 一般, 2 and above 競技). Games without it have no tier."""

    label: str = Field(min_length=1)  # as the text names it: トーナメント階層レベル
    lowest: int = Field(ge=1)
    highest: int = Field(ge=1)
    casual: list[int] = Field(min_length=1)  # the tiers the text makes 一般 (casual); the others are 競技
    citation: Citation

    @model_validator(mode="after")
    def _range(self):
        if self.highest < self.lowest or not all(self.lowest <= n <= self.highest for n in self.casual):
            raise ValueError("tiers: lowest <= casual <= highest")
        return self

    def level_of(self, tier: int) -> str:
        """`casual` or `competitive`, as the text ties the tier to the level of play."""
        return "casual" if tier in self.casual else "competitive"


class PolicyFile(Strict):
    """`policy.yaml`."""

    game: str
    name: str = Field(min_length=1)
    ladder: bool  # the text has penalty levels
    summary: str = Field(min_length=1)
    gaps: list[str] = []  # what the text does not decide, in plain words
    competitive_question: bool = False  # the wizard may ask 競技/一般 (tcg-taikai)
    hand_off: HandOff | None = None  # where the text decides nothing: who decides (default: the head judge)
    tiers: Tiers | None = None  # events of this game carry a tier (tcg-taikai 階層レベル)
    levels: list[Level] = []
    consequences: list[Consequence] = []
    rules: list[Rule] = []
    infractions: list[Infraction] = Field(min_length=1)


class Scenario(Strict):
    id: str = Field(pattern=ID_RE)
    situation: str = Field(min_length=1)
    infraction: str  # the infraction id that answers it
    accept: list[str] = []  # other answers the text allows as well (level/consequence ids, no-penalty, none)
    reasoning: str = Field(min_length=1)


class TrainingFile(Strict):
    """`training.yaml`: practice scenarios drawn from the same infractions."""

    note: str | None = None  # e.g. the text decides few cases
    scenarios: list[Scenario] = Field(min_length=1)


# --- the loaded model ---------------------------------------------------------------------------------


@dataclass
class Policy:
    game: str
    file: PolicyFile
    wizard: WizardFile
    training: TrainingFile
    levels: dict[str, Level]
    consequences: dict[str, Consequence]
    infractions: dict[str, Infraction]
    nodes: dict[str, Node]
    depth: int = 0  # the most answers from the start to an outcome
    parents: dict[str, tuple[str, str]] = field(default_factory=dict)  # infraction → first (node, answer)
    # resolve()'s answers by (name, results): the standing engine resolves every level of every record.
    _resolved: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.file.name

    @property
    def recordable(self) -> list[Level | Consequence]:
        """What a judge may record: the levels and the consequences that are penalties (not results)."""
        return list(self.levels.values()) + [c for c in self.consequences.values() if not c.result]

    @property
    def hand_off(self) -> HandOff:
        """Who decides what the text leaves open: the policy's own words, else the head judge."""
        return self.file.hand_off or HandOff(text=HAND_OFF_DEFAULT)

    def penalty_label(self, infraction: Infraction) -> str | None:
        """The penalty as the API reports it: the level's or consequence's label, or None."""
        if infraction.penalty is None:
            return None
        item = self.levels.get(infraction.penalty) or self.consequences[infraction.penalty]
        return item.label

    def penalty_text(self, infraction: Infraction) -> str:
        """For a badge: the label (with 「できます」 where the text only allows it), ペナルティなし for a procedure
        (with the result the text decides: ペナルティなし・棄権扱い), 規定なし where the text prescribes none."""
        label = self.penalty_label(infraction)
        if label is None:
            if not infraction.procedure:
                return "規定なし"
            # the results the text decides, then any other consequence that follows (Lycee's late drop: the
            # match was lost at 5 minutes already); ペナルティなし only where nothing but results follows
            results = self.results_of(infraction)
            others = [
                self.consequences[c]
                for c in infraction.also_consequences
                if c in self.consequences and self.consequences[c] not in results
            ]
            return "・".join(([] if others else ["ペナルティなし"]) + [c.label for c in results + others])
        return f"{label}（できます）" if self.penalty_may(infraction) else label

    def results_of(self, infraction: Infraction) -> list[Consequence]:
        """The results (not penalties) the text decides for a procedure: a drop, a forfeit (棄権扱い, 不戦敗)."""
        found = (self.consequences.get(c) for c in infraction.also_consequences)
        return [c for c in found if c is not None and c.result]

    def rule_badge(self, rule: Rule) -> str:
        """For a badge: what an accumulation or upgrade rule leads to, as the text names it (a level, the
        consequence or the removal in the text's words, or the levels an upgrade may reach)."""
        if rule.kind == "converts":
            return self.levels[rule.to].label
        if rule.kind == "removes":
            return self.consequences[rule.consequence].label if rule.consequence else rule.removal
        return "または".join(self.levels[x].label for x in rule.to_any)

    def rule_note(self, rule: Rule) -> str:
        """Beside the badge: whether the rule applies by itself or the judge decides."""
        if rule.automatic:
            return "自動で適用"
        return "格上げはジャッジの判断" if rule.kind == "upgrade" else "ジャッジの判断"

    def rule_issuer(self, rule: Rule) -> str | None:
        """Who alone may issue a level an upgrade may reach (イジンデン's 【敗北】), as the standing's upgrades say it;
        None where anyone may."""
        if rule.kind != "upgrade":
            return None
        who = [self.levels[x] for x in rule.to_any if self.levels[x].restricted_to]
        return "".join(issuer_text(lv.label, lv.restricted_to) for lv in who) or None

    def penalty_may(self, infraction: Infraction) -> str | None:
        """Where the text only allows the penalty (「できます」): who decides, in plain words; else None."""
        item = self.consequences.get(infraction.penalty) if infraction.penalty else None
        return item.may if item is not None else None

    def penalty_item(self, infraction: Infraction) -> Level | Consequence | None:
        if infraction.penalty is None:
            return None
        return self.levels.get(infraction.penalty) or self.consequences.get(infraction.penalty)

    def resolve(self, name: str, results: bool = False) -> Level | Consequence | None:
        """A level or consequence by id, label, mark or the text's bracketed form (【警告】, ②, W, w).

        A result that is not a penalty (`result: true`) is found only with `results=True`: it can never be
        recorded, and the standing engine names it without counting it."""
        if not isinstance(name, str):
            return self._resolve(name, results)
        cached = self._resolved.get((name, results), _MISSING)
        if cached is not _MISSING:
            return cached
        item = self._resolve(name, results)
        if len(self._resolved) < 4096:  # names come from requests too: the cache stays small
            self._resolved[(name, results)] = item
        return item

    def _resolve(self, name: str, results: bool) -> Level | Consequence | None:
        key = _key(name)
        for item in list(self.levels.values()) + [
            c for c in self.consequences.values() if results or not c.result
        ]:
            names = {item.id, item.label}
            if isinstance(item, Level):
                names |= {item.mark, f"{item.mark}{item.label}", f"{item.mark}【{item.label}】"}
            if key in {_key(n) for n in names}:
                return item
        return None


@dataclass
class Policies:
    games: dict[str, Policy]
    version: str

    def get(self, game: str) -> Policy | None:
        return self.games.get(game)

    def infraction(self, full_id: str) -> tuple[Policy, Infraction] | None:
        game, _, iid = full_id.partition("/")
        policy = self.games.get(game)
        if policy and iid in policy.infractions:
            return policy, policy.infractions[iid]
        return None


_MISSING = object()


def _key(name: str) -> str:
    s = unicodedata.normalize("NFKC", str(name)).strip().lower()
    return s.strip("【】[]「」")


def _squash_ws(s: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


def error_location(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top)"


def _read(path: Path, model: type[BaseModel], problems: list[str]) -> BaseModel | None:
    try:
        data = load_yaml(path)
    except FileNotFoundError:
        problems.append(f"{path}: missing")
        return None
    except DuplicateKeyError as exc:
        problems.append(str(exc))
        return None
    except yaml.YAMLError as exc:
        problems.append(f"{path}: not valid YAML: {exc}".replace("\n", " "))
        return None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(f"{path}: {error_location(err['loc'])}: {err['msg']}")
        return None


def check_citations(
    where: str, citations: list[Citation], corpus: Corpus, game: str, problems: list[str]
) -> None:
    for i, c in enumerate(citations):
        section = corpus.sections.get(c.section)
        if section is None:
            problems.append(f"{where}.citations[{i}].section: no section '{c.section}' in the corpus")
            continue
        if section.game != game:
            problems.append(
                f"{where}.citations[{i}].section: '{c.section}' belongs to another game "
                f"({section.game}); a policy cites only its own game's text"
            )
            continue
        if _squash_ws(c.quote) not in _squash_ws(section.text):
            problems.append(f"{where}.citations[{i}].quote: 「{c.quote}」 does not stand in {c.section}")


def _duplicates(where: str, ids: list[str], problems: list[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            problems.append(f"{where}: duplicate id '{i}'")
        seen.add(i)


def _load_policy(folder: Path, corpus: Corpus, problems: list[str]) -> Policy | None:
    game = folder.name
    before = len(problems)
    pf = _read(folder / "policy.yaml", PolicyFile, problems)
    wf = _read(folder / "wizard.yaml", WizardFile, problems)
    tf = _read(folder / "training.yaml", TrainingFile, problems)
    if pf is None or wf is None or tf is None:
        return None
    p, w, t = folder / "policy.yaml", folder / "wizard.yaml", folder / "training.yaml"
    if pf.game != game:
        problems.append(f"{p}: game: '{pf.game}' but the folder is '{game}'")
    if game not in corpus.games:
        problems.append(f"{p}: game: no game '{game}' in the corpus")
    if pf.ladder and not pf.levels:
        problems.append(f"{p}: levels: ladder: true needs the text's levels")
    if not pf.ladder and pf.levels:
        problems.append(f"{p}: levels: ladder: false takes no levels")
    _duplicates(
        f"{p}: levels/consequences", [x.id for x in pf.levels] + [x.id for x in pf.consequences], problems
    )
    _duplicates(f"{p}: rules", [x.id for x in pf.rules], problems)
    _duplicates(f"{p}: infractions", [x.id for x in pf.infractions], problems)
    _duplicates(f"{w}: nodes", [x.id for x in wf.nodes], problems)
    _duplicates(f"{t}: scenarios", [x.id for x in tf.scenarios], problems)
    levels = {x.id: x for x in pf.levels}
    consequences = {x.id: x for x in pf.consequences}
    infractions = {x.id: x for x in pf.infractions}
    nodes = {x.id: x for x in wf.nodes}

    for i, x in enumerate(pf.levels):
        check_citations(f"{p}: levels[{i}]", x.citations, corpus, game, problems)
    if pf.tiers is not None:
        check_citations(f"{p}: tiers", [pf.tiers.citation], corpus, game, problems)
    for i, x in enumerate(pf.consequences):
        check_citations(f"{p}: consequences[{i}]", x.citations, corpus, game, problems)
    for i, r in enumerate(pf.rules):
        where = f"{p}: rules[{i}]"
        check_citations(where, r.citations, corpus, game, problems)
        if r.consequence is not None and r.consequence not in consequences:
            problems.append(f"{where}.consequence: unknown consequence '{r.consequence}'")
        for key, lid in [("level", r.level), ("to", r.to)] + [("to_any", x) for x in r.to_any]:
            if lid is not None and lid not in levels:
                problems.append(
                    f"{where}.{key}: unknown level '{lid}' (levels: {', '.join(levels) or 'none'})"
                )
    for i, x in enumerate(pf.infractions):
        where = f"{p}: infractions[{i}]"
        if x.penalty is not None and x.penalty not in levels and x.penalty not in consequences:
            problems.append(
                f"{where}.penalty: unknown level '{x.penalty}' "
                f"(levels and consequences: {', '.join(list(levels) + list(consequences))})"
            )
        for j, c in enumerate(x.also_consequences):
            if c not in consequences:
                problems.append(f"{where}.also_consequences[{j}]: unknown consequence '{c}'")
        check_citations(where, x.citations, corpus, game, problems)

    # The tree: every target exists, every node is reachable from the start, no cycles, every infraction is
    # an outcome somewhere (or the situation lookup alone would find it: that is allowed, but not a dead end).
    for n in wf.nodes:
        if n.id in RESERVED_NODE_IDS:
            problems.append(f"{w}: nodes[{n.id}]: '{n.id}' is reserved (it is a key of the wizard's URLs)")
    if wf.start not in nodes:
        problems.append(f"{w}: start: unknown node '{wf.start}'")
    for n in wf.nodes:
        _duplicates(f"{w}: nodes[{n.id}].answers", [a.id for a in n.answers], problems)
        for a in n.answers:
            if a.next is not None and a.next not in nodes:
                problems.append(f"{w}: nodes[{n.id}].answers[{a.id}].next: unknown node '{a.next}'")
            if a.outcome is not None and a.outcome not in infractions:
                problems.append(
                    f"{w}: nodes[{n.id}].answers[{a.id}].outcome: unknown infraction '{a.outcome}'"
                )
    depth = 0
    parents: dict[str, tuple[str, str]] = {}
    if wf.start in nodes:
        reached: set[str] = set()
        on_path: list[str] = []

        def walk(nid: str, d: int) -> None:
            nonlocal depth
            if nid in on_path:
                problems.append(
                    f"{w}: nodes[{nid}]: cycle {' → '.join(on_path[on_path.index(nid) :] + [nid])}"
                )
                return
            if nid not in nodes:
                return
            reached.add(nid)
            on_path.append(nid)
            for a in nodes[nid].answers:
                if a.next is not None:
                    walk(a.next, d + 1)
                elif a.outcome is not None:
                    depth = max(depth, d + 1)
                    parents.setdefault(a.outcome, (nid, a.id))
            on_path.pop()

        walk(wf.start, 0)
        for n in wf.nodes:
            if n.id not in reached:
                problems.append(f"{w}: nodes[{n.id}]: unreachable from start '{wf.start}'")
        for iid in infractions:
            if iid not in parents:
                problems.append(f"{w}: infraction '{iid}' is not an outcome of any answer")

    for i, s in enumerate(tf.scenarios):
        if s.infraction not in infractions:
            problems.append(f"{t}: scenarios[{i}].infraction: unknown infraction '{s.infraction}'")
        for j, a in enumerate(s.accept):
            if a not in levels and a not in consequences and a not in ("no-penalty", "none"):
                problems.append(f"{t}: scenarios[{i}].accept[{j}]: unknown answer '{a}'")
    if pf.hand_off is not None:
        check_citations(f"{p}: hand_off", pf.hand_off.citations, corpus, game, problems)
    if len(problems) > before:
        return None
    return Policy(
        game=game,
        file=pf,
        wizard=wf,
        training=tf,
        levels=levels,
        consequences=consequences,
        infractions=infractions,
        nodes=nodes,
        depth=depth,
        parents=parents,
    )


def game_folders(directory: str | Path | Sequence[str | Path], problems: list[str]) -> list[Path]:
    """Every `<game>/` folder of the infraction folder (or folders, in order); a game twice is a problem."""
    dirs = [Path(d) for d in directory] if isinstance(directory, (list, tuple)) else [Path(directory)]
    out: dict[str, Path] = {}
    for d in dirs:
        if not d.is_dir():
            raise PolicyError([f"{d}: no such folder"])
        for folder in sorted(x for x in d.iterdir() if x.is_dir() and not x.name.startswith((".", "_"))):
            if folder.name in out:
                problems.append(f"{folder}: game '{folder.name}' is already in {out[folder.name].parent}")
                continue
            out[folder.name] = folder
    return list(out.values())


def load_policies(directory: str | Path | Sequence[str | Path], corpus: Corpus) -> Policies:
    """Read every `infractions/<game>/` (of each folder given, in order); raise PolicyError listing every
    problem."""
    problems: list[str] = []
    games: dict[str, Policy] = {}
    digest = hashlib.sha256()
    for folder in game_folders(directory, problems):
        for name in ("policy.yaml", "wizard.yaml", "training.yaml"):
            f = folder / name
            if f.exists():
                digest.update(f"{folder.name}/{name}\0".encode() + f.read_bytes())
        policy = _load_policy(folder, corpus, problems)
        if policy is not None:
            games[folder.name] = policy
    if problems:
        raise PolicyError(problems)
    return Policies(games=games, version=f"{corpus.version}:{digest.hexdigest()[:16]}")


# --- the standing engine -------------------------------------------------------------------------------

# The engine's own version (this file's text): a standing kept from an earlier engine (the players' kept tally,
# events/records.py) is not carried on by a changed one.
ENGINE_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


@dataclass
class Step:
    after: str
    effective: dict[str, int]
    removed: bool
    notes: list[str]
    upgrades: list[dict]


@dataclass
class Standing:
    counts: dict[str, int]
    effective: dict[str, int]
    removed: bool
    steps: list[Step]
    notes: list[str]
    removed_text: str | None = None  # what removal means here, in the policy's words


@dataclass(frozen=True)
class Tally:
    """All the engine carries from one penalty to the next: the counts by label, and whether (and by which
    rule's words) the player was removed. Each step reads only these, the rules and its own penalty (the
    effective standing is the counts with the conversions applied), so `standing(policy, more,
    start=tally_of(standing(policy, earlier)))` comes to what `standing(policy, earlier + more)` does, with the
    steps of `more` only: recording adds one penalty to a kept tally instead of reading the player's history.
    """

    counts: dict[str, int]
    removed: bool = False
    removed_text: str | None = None


def tally_of(s: Standing) -> Tally:
    return Tally(counts=dict(s.counts), removed=s.removed, removed_text=s.removed_text)


def _converted(policy: Policy, counts: dict[str, int]) -> dict[str, int]:
    """The effective standing of `counts`: the conversions applied in the rules' order (as in a step)."""
    effective = dict(counts)
    for rule in policy.file.rules:
        if rule.kind == "converts":
            level = policy.levels[rule.level]
            n = effective.get(level.label, 0)
            if n >= rule.count:
                to = policy.levels[rule.to]
                effective[level.label] = n % rule.count
                effective[to.label] = effective.get(to.label, 0) + n // rule.count
    return effective


def standing(
    policy: Policy, penalties: list[str], last_steps: int | None = None, start: Tally | None = None
) -> Standing:
    """What a player's penalties come to under the game's rules, step by step.

    Automatic rules apply as the text has them (Lycee: two 注意 count as one 警告; two 警告 remove the player).
    Upgrades the text leaves to the judge never apply by themselves: they come back as `upgrades` and notes,
    for the judge to decide. With `last_steps`, only the last steps are kept (with their notes and upgrades);
    the counts, the effective standing, removal and the notes are the same. With `start` (the `Tally` of the
    earlier penalties), `penalties` are those that follow them, and the steps are theirs.
    """
    items = []
    result_notes: list[str] = []
    for i, name in enumerate(penalties):
        item = policy.resolve(str(name), results=True)
        if isinstance(item, Consequence) and item.result:
            result_notes.append(f"{item.label}はペナルティではなく結果なので、数えません。")
            continue
        if item is None:
            known = "、".join(
                [lv.label for lv in policy.levels.values()]
                + [c.label for c in policy.consequences.values() if not c.result]
            )
            if not policy.file.ladder:
                raise StandingError(
                    f"{i + 1} 件目「{str(name)[:40]}」: {policy.name}にはペナルティの段階がありません。"
                    f"記録できるのは {known or '（なし）'} です。"
                )
            raise StandingError(
                f"{i + 1} 件目「{str(name)[:40]}」はこのゲームのペナルティにありません。"
                f"使えるのは {known} です。"
            )
        items.append(item)

    order = list(policy.levels.values()) + list(policy.consequences.values())
    counts: dict[str, int] = dict(start.counts) if start is not None else {}
    removed = start.removed if start is not None else False
    removed_text: str | None = start.removed_text if start is not None else None
    effective = _converted(policy, counts) if start is not None else {}
    steps: list[Step] = []
    first_kept = 0 if last_steps is None else len(items) - last_steps
    for i, item in enumerate(items):
        keep = i >= first_kept  # the notes, upgrades and step of an earlier record are not kept
        counts[item.label] = counts.get(item.label, 0) + 1
        effective = {k: v for k, v in counts.items()}
        notes: list[str] = []
        upgrades: list[dict] = []
        for rule in policy.file.rules:
            level = policy.levels[rule.level]
            if rule.kind == "converts":
                n = effective.get(level.label, 0)
                if n >= rule.count:
                    to = policy.levels[rule.to]
                    effective[level.label] = n % rule.count
                    effective[to.label] = effective.get(to.label, 0) + n // rule.count
                    if keep and item.label == level.label and n % rule.count == 0:
                        notes.append(  # the rule's own words; the figures only when they say more
                            rule.text
                            if n == rule.count
                            else f"{level.label} {n} 点は {to.label} {n // rule.count} 点に相当します"
                            f"（規定：「{rule.text}」）。"
                        )
            elif rule.kind == "removes":
                if effective.get(level.label, 0) >= rule.count and not removed:
                    removed = True
                    removed_text = rule.removal
                    if keep:
                        notes.append(f"{level.label}が {effective[level.label]} 点になりました。{rule.text}")
            elif (
                rule.kind == "upgrade"
                and keep
                and item.label == level.label
                and counts[level.label] >= (rule.count or 2)
            ):
                # Without a count in the text (「何度も」), every repeat is offered with the earlier records.
                targets = [policy.levels[x] for x in rule.to_any]
                earlier = counts[level.label] - 1
                who = {t.label: t.restricted_to for t in targets if t.restricted_to}
                upgrades.append(
                    {
                        "from": level.label,
                        "to": [t.label for t in targets],
                        "automatic": False,
                        "rule": rule.id,
                        "earlier": earlier,
                        "count": rule.count,
                        "restricted_to": who,
                    }
                )
                when = (
                    f"{rule.count} 回目から格上げできます。"
                    if rule.count
                    else "本文は何回目からかを書いていません。"
                )
                notes.append(
                    f"この選手はすでに{level.label}を {earlier} 回受けています。{rule.text}{when}"
                    + "".join(issuer_text(lb, w) for lb, w in who.items())
                    + "格上げするかどうかはジャッジの判断で、自動では変わりません。"
                )
        if getattr(item, "removes", False) and not removed:
            removed = True
            removed_text = item.removal
            notes.append(f"{item.label}: {item.description}")
        if not keep:
            continue
        effective = {x.label: effective[x.label] for x in order if effective.get(x.label)}
        steps.append(
            Step(after=item.label, effective=effective, removed=removed, notes=notes, upgrades=upgrades)
        )

    final_notes: list[str] = list(dict.fromkeys(result_notes))
    if not policy.file.ladder:
        final_notes.append(f"{policy.name}にはペナルティの段階と累積の規定がありません。")
    for rule in policy.file.rules:
        if not rule.automatic:
            final_notes.append(rule.text)
    return Standing(
        counts={x.label: counts[x.label] for x in order if counts.get(x.label)},
        effective={x.label: effective[x.label] for x in order if effective.get(x.label)},
        removed=removed,
        steps=steps,
        notes=final_notes,
        removed_text=removed_text,
    )


def standing_json(s: Standing, last_step_only: bool = False) -> dict:
    """The API's JSON for a standing (with `last_step_only`, only the step the last record made)."""
    return {
        "counts": s.counts,
        "effective": s.effective,
        "removed": s.removed,
        "removed_text": s.removed_text,
        "steps": [
            {
                "after": st.after,
                "effective": st.effective,
                "removed": st.removed,
                "notes": st.notes,
                "upgrades": st.upgrades,
            }
            for st in (s.steps[-1:] if last_step_only else s.steps)
        ],
        "notes": s.notes,
    }
