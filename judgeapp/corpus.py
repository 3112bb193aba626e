"""The rules corpus: games, documents and sections read from `rules_corpus/`.

Loaded once, strictly: a file that breaks the format (docs/corpus.md) fails with the file and the key
named. The reading pages, the search index, the JSON API and the CLI all read this one model.
"""

from __future__ import annotations

import hashlib
import re
import string
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from markdown_it import MarkdownIt
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import CorpusError
from .textnorm import HIRAGANA_RE
from .yamlload import DuplicateKeyError, load_yaml

ANCHOR_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]*$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
HEADING_RE = re.compile(r"^(#{1,4})\s+(.+?)\s*\{#([^}\s]+)\}\s*$")
TABLE_SEPARATOR_RE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


_BRACKETED_RE = re.compile(r"[（(][^）)]*[）)]")


def _name_key(name: str) -> str:
    """A game's name as names are compared (width, case, spaces and middle dots ignored)."""
    return re.sub(r"[\s・･]", "", unicodedata.normalize("NFKC", name)).casefold()


def _template_fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}


class Numbering(BaseModel):
    """One way a game numbers its sections (`_game.yaml`, `numbering:`; docs/corpus.md, "The games").

    `anchor` is a regular expression that a numbered section's anchor matches in full; its named groups, and
    `{anchor}` itself, fill the `keys` (how judges type the number: `{num}{sub}` for 6biii, `第{n}章`).
    `refers` finds a reference to such a section in the text (「第 10 章」); its named groups fill `target`,
    the anchor it points to (`ch{n}`; digits are read as ASCII, 「１０」 as 10). With `note_missing`, a
    reference to a section the document does not have is marked as such.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    anchor: str = Field(min_length=1)
    keys: list[str] = Field(min_length=1)
    refers: str | None = None
    target: str = "{anchor}"
    note_missing: bool = False

    @model_validator(mode="after")
    def _patterns(self):
        try:
            anchor_re = re.compile(self.anchor)
            refers_re = re.compile(self.refers) if self.refers else None
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        names = set(anchor_re.groupindex) | {"anchor"}
        for key in self.keys:
            if not _template_fields(key) <= names:
                raise ValueError(f"keys: '{key}' uses a name the anchor pattern has no group for ({names})")
        if refers_re is not None and not _template_fields(self.target) <= set(refers_re.groupindex):
            raise ValueError(f"target: '{self.target}' uses a name the refers pattern has no group for")
        return self


class GameMeta(BaseModel):
    """`rules_corpus/<game>/_game.yaml`."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    short_name: str = Field(min_length=1)
    documents: list[str] = Field(min_length=1)
    # what else judges call the game in a search's words (リセ, デュエマ, DM): read as the game's name, as its
    # name and short name are (`Game.names`; docs/corpus.md, "The games")
    aliases: list[str] = []
    numbering: list[Numbering] = []  # how the game numbers its sections; none for titled sections only

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, aliases: list[str]) -> list[str]:
        for alias in aliases:
            if len(_name_key(alias)) < 2:
                raise ValueError(f"'{alias}': an alias needs two characters or more")
            if HIRAGANA_RE.search(alias):
                # a name is read only outside hiragana (しっかり is no リセ, とりせつ no リセ): it would never match
                raise ValueError(f"'{alias}': an alias in hiragana is never read (write it in katakana)")
        if len({_name_key(a) for a in aliases}) != len(aliases):
            raise ValueError("an alias is listed twice")
        return aliases


class FrontMatter(BaseModel):
    """The YAML front matter of a document."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1)
    game: str
    doc: str
    publisher: str = Field(min_length=1)
    version: str = Field(min_length=1)
    source: str = Field(min_length=1)
    status: Literal["complete", "incomplete"]
    added_headings: list[str] = []
    defects: list[str]


@dataclass
class Section:
    """One headed section of a document; `text` is its own plain text, without sub-sections."""

    id: str
    game: str
    doc: str
    anchor: str
    title: str
    level: int
    order: int
    markdown: str
    text: str
    parent: str | None = None
    children: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"/rules/{self.id}"


@dataclass
class Document:
    """One source document of a game."""

    id: str
    game: str
    doc: str
    meta: FrontMatter
    path: Path
    sections: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.meta.title

    @property
    def url(self) -> str:
        return f"/rules/{self.id}"

    def top_sections(self, corpus: Corpus) -> list[Section]:
        return [corpus.sections[s] for s in self.sections if corpus.sections[s].parent is None]


@dataclass
class Game:
    """A game and its documents, in the order `_game.yaml` gives."""

    id: str
    meta: GameMeta
    documents: list[Document] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def names(self) -> list[str]:
        """What a judge may type for the game in a search (docs/corpus.md, "The games"): its name, the name
        without its bracketed part (デュエル・マスターズ（泉州DM版） → デュエル・マスターズ), its short name and its
        aliases; each once."""
        bare = _BRACKETED_RE.sub("", self.meta.name).strip()
        once: dict[str, str] = {}
        for n in (self.meta.name, bare, self.meta.short_name, *self.meta.aliases):
            if n:
                once.setdefault(_name_key(n), n)
        return list(once.values())

    @property
    def url(self) -> str:
        return f"/rules/{self.id}"


@dataclass
class Corpus:
    """All games, documents and sections; `version` is a digest of the files it was read from.

    `roots` are the folders read, in order (the project's `rules_corpus/` first, then any extra folders,
    such as the test suite's fixture game); `root` is the first."""

    root: Path
    games: dict[str, Game]
    documents: dict[str, Document]
    sections: dict[str, Section]
    version: str
    roots: list[Path] = field(default_factory=list)
    # each section's body as HTML, rendered once (`render_section_html`: a corpus never changes once read)
    html: dict[str, Markup] = field(default_factory=dict, repr=False, compare=False)

    def section(self, section_id: str) -> Section | None:
        return self.sections.get(section_id)

    def game_names(self) -> dict[str, list[str]]:
        """Each game's names as a judge may type them in a search (`Game.names`), for the search index."""
        return {g: game.names for g, game in self.games.items()}

    def number_keys(self, section: Section) -> list[str]:
        """How judges type the section's number, from its game's `numbering` (6b-iii / 6biii, 第9章, 3条)."""
        keys: list[str] = []
        for numbering in self.games[section.game].meta.numbering:
            m = re.fullmatch(numbering.anchor, section.anchor)
            if m:
                values = {k: v or "" for k, v in m.groupdict().items()}
                keys += [k.format(anchor=section.anchor, **values) for k in numbering.keys]
        return list(dict.fromkeys(k for k in keys if k))

    def numbering_patterns(self, game: str) -> list[Numbering]:
        """The game's numbering, as `_game.yaml` gives it (for the search index and the reading pages)."""
        return list(self.games[game].meta.numbering)

    def neighbours(self, section: Section) -> tuple[Section | None, Section | None]:
        """The sections before and after this one in reading order of its document."""
        ids = self.documents[f"{section.game}/{section.doc}"].sections
        i = ids.index(section.id)
        prev_s = self.sections[ids[i - 1]] if i > 0 else None
        next_s = self.sections[ids[i + 1]] if i + 1 < len(ids) else None
        return prev_s, next_s

    def ancestors(self, section: Section) -> list[Section]:
        chain = []
        parent = section.parent
        while parent:
            chain.append(self.sections[parent])
            parent = self.sections[parent].parent
        return list(reversed(chain))


def markdown_to_text(markdown: str) -> str:
    """Plain text of a section body: list markers and table pipes dropped, one line per block."""
    lines = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or TABLE_SEPARATOR_RE.match(line):
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            line = "　".join(c for c in cells if c)
        elif line.startswith("- "):
            line = line[2:].strip()
        lines.append(line)
    return "\n".join(lines)


def source_lines(markdown: str) -> list[str]:
    """Each piece of body text that must stand in the source (used by the corpus tests)."""
    pieces = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or TABLE_SEPARATOR_RE.match(line):
            continue
        if line.startswith("|"):
            pieces.extend(c.strip() for c in line.strip("|").split("|") if c.strip())
        else:
            pieces.append(line[2:] if line.startswith("- ") else line)
    return pieces


def _split_front_matter(text: str, name: str, problems: list[str]) -> tuple[dict, str]:
    if not text.startswith("---\n"):
        problems.append(f"{name}: front matter: missing (the file must start with '---')")
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        problems.append(f"{name}: front matter: not closed with '---'")
        return {}, text
    try:
        data = load_yaml(text[4:end], name, line_offset=1) or {}
    except DuplicateKeyError as exc:
        problems.append(f"{name}: front matter: {str(exc).removeprefix(name + ': ')}")
        return {}, text[end + 5 :]
    except yaml.YAMLError as exc:
        problems.append(f"{name}: front matter: invalid YAML ({exc})")
        return {}, text[end + 5 :]
    if not isinstance(data, dict):
        problems.append(f"{name}: front matter: must be a mapping")
        return {}, text[end + 5 :]
    return data, text[end + 5 :]


def _pydantic_problems(name: str, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(root)"
        out.append(f"{name}: {key}: {err['msg']}")
    return out


def _parse_sections(game: str, doc: str, body: str, name: str, problems: list[str]) -> list[Section]:
    sections: list[Section] = []
    stack: list[Section] = []
    current: Section | None = None
    buffer: list[str] = []

    def close() -> None:
        if current is not None:
            current.markdown = "\n".join(buffer).strip()
            current.text = markdown_to_text(current.markdown)

    for lineno, line in enumerate(body.splitlines(), start=1):
        if line.startswith("#"):
            m = HEADING_RE.match(line)
            if not m:
                problems.append(f"{name}: line {lineno}: heading without '{{#anchor}}': {line[:40]}")
                continue
            close()
            buffer = []
            level, title, anchor = len(m.group(1)), m.group(2).strip(), m.group(3)
            if not ANCHOR_RE.match(anchor):
                problems.append(f"{name}: {anchor}: anchor must be ASCII letters, digits, '-' or '.'")
            while stack and stack[-1].level >= level:
                stack.pop()
            parent = stack[-1] if stack else None
            if parent is None and level != 1:
                problems.append(f"{name}: {anchor}: level {level} heading has no parent heading")
            current = Section(
                id=f"{game}/{doc}/{anchor}",
                game=game,
                doc=doc,
                anchor=anchor,
                title=title,
                level=level,
                order=len(sections),
                markdown="",
                text="",
                parent=parent.id if parent else None,
            )
            if parent:
                parent.children.append(current.id)
            sections.append(current)
            stack.append(current)
        elif current is None:
            if line.strip():
                problems.append(f"{name}: line {lineno}: text before the first heading")
        else:
            buffer.append(line)
    close()
    return sections


def _game_dirs(roots: list[Path], problems: list[str]) -> Iterator[Path]:
    """Every game folder of every root, in order; a game id found in two roots is a problem."""
    seen: dict[str, Path] = {}
    for root in roots:
        # Folders starting with '.' or '_' are not games (`_sources/` holds the fidelity records).
        for game_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
            if game_dir.name in seen:
                problems.append(f"{game_dir}: game '{game_dir.name}' is already in {seen[game_dir.name]}")
                continue
            seen[game_dir.name] = root
            yield game_dir


def load_corpus(root: str | Path | Sequence[str | Path]) -> Corpus:
    """Read and validate every game folder under `root` (or under each of several roots, in order: the
    project's corpus, then extra folders); raise CorpusError listing every problem."""
    roots = [Path(r) for r in root] if isinstance(root, (list, tuple)) else [Path(root)]
    problems: list[str] = []
    games: dict[str, Game] = {}
    documents: dict[str, Document] = {}
    sections: dict[str, Section] = {}
    digest = hashlib.sha256()
    meta_files: dict[str, str] = {}  # each game's _game.yaml, as problems name it

    for r in roots:
        if not r.is_dir():
            raise CorpusError([f"{r}: the corpus folder does not exist"])
    for game_dir in _game_dirs(roots, problems):
        root = game_dir.parent
        game_id = game_dir.name
        meta_path = game_dir / "_game.yaml"

        def rel(p: Path, root: Path = root) -> str:
            return str(p.relative_to(root.parent)) if p.is_relative_to(root.parent) else str(p)

        if not SLUG_RE.match(game_id):
            problems.append(f"{rel(game_dir)}: game id must be lower-case ASCII, digits and '-'")
        if not meta_path.exists():
            problems.append(f"{rel(meta_path)}: missing")
            continue
        raw_meta = meta_path.read_bytes()
        digest.update(raw_meta)
        try:
            meta = GameMeta.model_validate(load_yaml(raw_meta.decode("utf-8"), rel(meta_path)) or {})
        except (ValidationError, yaml.YAMLError) as exc:
            problems.extend(
                _pydantic_problems(rel(meta_path), exc)
                if isinstance(exc, ValidationError)
                else [str(exc)]
                if isinstance(exc, DuplicateKeyError)
                else [f"{rel(meta_path)}: invalid YAML ({exc})"]
            )
            continue
        game = Game(id=game_id, meta=meta)
        games[game_id] = game
        meta_files[game_id] = rel(meta_path)
        listed = set(meta.documents)
        on_disk = {p.stem for p in game_dir.glob("*.md")}
        for missing in sorted(listed - on_disk):
            problems.append(f"{rel(meta_path)}: documents: '{missing}.md' does not exist")
        for extra in sorted(on_disk - listed):
            problems.append(f"{rel(game_dir / (extra + '.md'))}: not listed in _game.yaml documents")
        for doc_id in meta.documents:
            path = game_dir / f"{doc_id}.md"
            if not path.exists():
                continue
            name = rel(path)
            raw = path.read_bytes()
            digest.update(raw)
            data, body = _split_front_matter(raw.decode("utf-8"), name, problems)
            try:
                fm = FrontMatter.model_validate(data)
            except ValidationError as exc:
                problems.extend(_pydantic_problems(name, exc))
                continue
            if fm.game != game_id:
                problems.append(f"{name}: game: '{fm.game}' but the folder is '{game_id}'")
            if fm.doc != doc_id:
                problems.append(f"{name}: doc: '{fm.doc}' but the file is '{doc_id}.md'")
            document = Document(id=f"{game_id}/{doc_id}", game=game_id, doc=doc_id, meta=fm, path=path)
            parsed = _parse_sections(game_id, doc_id, body, name, problems)
            if not parsed:
                problems.append(f"{name}: no sections")
            anchors = {s.anchor for s in parsed}
            for added in fm.added_headings:
                if added not in anchors:
                    problems.append(f"{name}: added_headings: '{added}' is no heading of this document")
            for section in parsed:
                if section.id in sections:
                    problems.append(f"{name}: {section.anchor}: duplicate section id {section.id}")
                    continue
                if not section.text and not section.children:
                    problems.append(f"{name}: {section.anchor}: empty section (no text, no sub-sections)")
                sections[section.id] = section
                document.sections.append(section.id)
            documents[document.id] = document
            game.documents.append(document)
    if not games:
        problems.append(f"{roots[0]}: no game folders")
    named: dict[str, str] = {}  # a name a judge may type → the game it names (one game only)
    for g in games.values():
        for n in g.names:
            other = named.setdefault(_name_key(n), g.id)
            if other != g.id:
                problems.append(f"{meta_files[g.id]}: '{n}' is a name of the game '{other}' too")
    if problems:
        raise CorpusError(problems)
    return Corpus(
        root=roots[0],
        games=games,
        documents=documents,
        sections=sections,
        version=digest.hexdigest()[:16],
        roots=roots,
    )


# --- Rendering -------------------------------------------------------------------------------------

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable("table")

_TAG_SPLIT_RE = re.compile(r"(<[^>]+>)")


def _target(numbering: Numbering, m: re.Match) -> str:
    """The anchor a reference points to; digits read as ASCII numbers (「１０」 → 10)."""
    values = {}
    for k, v in m.groupdict().items():
        v = unicodedata.normalize("NFKC", v or "")
        values[k] = str(int(v)) if v.isdigit() else v
    return numbering.target.format(**values)


def render_section_html(corpus: Corpus, section: Section) -> Markup:
    """The section body as HTML, with references to other sections of the same document linked (the game's
    `numbering` says what a reference looks like). Rendered once per section and kept on the corpus."""
    done = corpus.html.get(section.id)
    if done is None:
        done = corpus.html[section.id] = _render_section_html(corpus, section)
    return done


def _render_section_html(corpus: Corpus, section: Section) -> Markup:
    html = _md.render(section.markdown)
    doc = corpus.documents[f"{section.game}/{section.doc}"]
    patterns = [(re.compile(n.refers), n) for n in corpus.games[section.game].meta.numbering if n.refers]
    parts = _TAG_SPLIT_RE.split(html)
    inside_link = False
    for i, part in enumerate(parts):
        if part.startswith("<"):
            inside_link = part.startswith("<a ") or (inside_link and part != "</a>")
            continue
        if inside_link or not part:
            continue
        for pattern, numbering in patterns:

            def link(m: re.Match, numbering: Numbering = numbering) -> str:
                target = f"{doc.id}/{_target(numbering, m)}"
                if target in corpus.sections and target != section.id:
                    return f'<a class="xref" href="/rules/{target}">{m.group(0)}</a>'
                if numbering.note_missing and target not in corpus.sections:
                    # A section the document does not have (イジンデン's 「第 11 章」): say so, as ours.
                    return (
                        f'{m.group(0)}<small class="app-note">［judgeapp 注：この文書に'
                        f"{m.group(0)}はありません］</small>"
                    )
                return m.group(0)

            # Only link in text that does not already hold a link from an earlier pattern.
            pieces = _TAG_SPLIT_RE.split(part)
            part = "".join(p if p.startswith("<") else pattern.sub(link, p) for p in pieces)
        parts[i] = part
    return Markup("".join(parts))
