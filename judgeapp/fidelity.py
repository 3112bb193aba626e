"""The corpus against its sources, with or without the source files (docs/corpus.md, "Fidelity").

The source texts (`shared/seeds/*.txt`) live outside the repository. So that a fresh clone can still check
that the corpus keeps their wording, each source has a record in `rules_corpus/_sources/<source>.yaml`,
written from the source itself by `judgeapp check --sources DIR --record`:

- provenance: the file's name, size and SHA-256, the documents drawn from it and who issues them;
- fingerprints: the SHA-256 of the whole normalised text and of each of its paragraphs and sentences;
- quoted: for each piece of corpus text (each heading the source has, each body line, each table cell),
  where it stands in the normalised source and the hash of the source's characters there;
- numbered: the section numbers the source writes (found with the record's own pattern).

Normalising drops every whitespace character and nothing else (the extraction broke lines and spaced words at
random; it never changed a character). Without the sources, `check_records` recomputes the corpus's hashes: a
changed character, a lost or added line fails with the section named. With the sources, `compare_sources`
also checks each piece against the text itself and each record against its source.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .corpus import Corpus, Document, source_lines
from .yamlload import load_yaml

RECORDS_DIR = "_sources"
NORMALISATION = "every whitespace character removed (Python's \\s), nothing else changed"
HASH_CHARS = 16  # of the SHA-256 hex digest, per piece: enough to tell any edit
_WS = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[。！？])")


def normalise(text: str) -> str:
    """The text as fingerprints see it: without whitespace."""
    return _WS.sub("", text)


def digest(text: str, chars: int = HASH_CHARS) -> str:
    """The SHA-256 (hex, shortened to `chars`) of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def source_units(text: str) -> list[str]:
    """The source's paragraphs (its lines), each cut after 。！？ into sentences, normalised; empty ones
    dropped."""
    out = []
    for line in text.splitlines():
        for part in _SENTENCE_END.split(line):
            unit = normalise(part)
            if unit:
                out.append(unit)
    return out


@dataclass(frozen=True)
class Piece:
    """One piece of corpus text that must stand in the source."""

    document: str
    anchor: str
    kind: str  # "h" (a heading the source has) or "t" (a body line or table cell)
    text: str

    @property
    def where(self) -> str:
        return f"{self.document}/{self.anchor}"


def document_pieces(corpus: Corpus, doc: Document) -> list[Piece]:
    """Every heading the source has and every body line of the document, in reading order."""
    out = []
    for sid in doc.sections:
        sec = corpus.sections[sid]
        if sec.anchor not in doc.meta.added_headings:
            out.append(Piece(doc.id, sec.anchor, "h", sec.title))
        out += [Piece(doc.id, sec.anchor, "t", line) for line in source_lines(sec.markdown)]
    return out


def documents_by_source(corpus: Corpus) -> dict[str, list[Document]]:
    """The corpus documents grouped by the source file their front matter names."""
    out: dict[str, list[Document]] = {}
    for doc in corpus.documents.values():
        out.setdefault(doc.meta.source, []).append(doc)
    return out


def record_path(corpus: Corpus, source: str) -> Path:
    """Where a source's record lives: `_sources/` of the corpus folder that holds its documents."""
    root = documents_by_source(corpus)[source][0].path.parent.parent
    return root / RECORDS_DIR / f"{Path(source).stem}.yaml"


def load_records(corpus_root: str | Path | list) -> dict[str, dict]:
    """Every record under `<corpus>/_sources/` (of each corpus folder given), by source file name."""
    out = {}
    for root in corpus_root if isinstance(corpus_root, (list, tuple)) else [corpus_root]:
        for path in sorted((Path(root) / RECORDS_DIR).glob("*.yaml")):
            data = load_yaml(path)
            out[data["source"]] = data
    return out


def make_record(
    corpus: Corpus, source: str, text: str, previous: dict | None = None
) -> tuple[dict, list[str]]:
    """The record of one source (and the pieces that do not stand in it, which are left out of it)."""
    previous = previous or {}
    docs = documents_by_source(corpus)[source]
    norm = normalise(text)
    problems = []
    quoted: dict[str, list] = {}
    for doc in docs:
        rows = []
        for p in document_pieces(corpus, doc):
            n = normalise(p.text)
            at = norm.find(n)
            if at < 0 or not n:
                what = "heading" if p.kind == "h" else "text"
                problems.append(f"{p.where}: {what} not in {source}: {p.text[:50]}")
                continue
            rows.append([p.anchor, p.kind, at, len(n), digest(norm[at : at + len(n)])])
        quoted[doc.id] = rows
    numbered = dict(previous.get("numbered") or {})
    if numbered.get("pattern"):
        numbered["found"] = sorted(set(re.findall(numbered["pattern"], text)), key=_number_order)
    raw = text.encode("utf-8")
    record = {
        "source": source,
        "provenance": {
            "origin": previous.get("provenance", {}).get(
                "origin", "shared/seeds/ (text extracted from the publisher's page or PDF)"
            ),
            "bytes": len(raw),
            "sha256_file": hashlib.sha256(raw).hexdigest(),
            "documents": [
                {"id": d.id, "title": d.meta.title, "publisher": d.meta.publisher, "version": d.meta.version}
                for d in docs
            ],
        },
        "normalisation": NORMALISATION,
        "sha256": digest(norm, 64),
        "chars": len(norm),
        "units": [digest(u) for u in source_units(text)],
        **({"numbered": numbered} if numbered else {}),
        "quoted": quoted,
    }
    return record, problems


def _number_order(n: str) -> tuple:
    m = re.match(r"\D*(\d+)(.*)", n)
    return (int(m.group(1)), m.group(2)) if m else (0, n)


def write_record(path: Path, record: dict) -> None:
    """Write a record with one quoted piece a line (diffs stay readable)."""
    head = {k: v for k, v in record.items() if k not in ("units", "quoted")}
    out = [
        "# Written by `judgeapp check --sources DIR --record` from the source itself: do not edit by hand",
        "# (only provenance.origin and numbered.pattern are kept from the previous record).",
        yaml.safe_dump(head, allow_unicode=True, sort_keys=False, width=110).rstrip(),
    ]
    out.append("units:  # SHA-256 (first 16 hex) of each normalised paragraph/sentence of the source")
    out += [f'  - "{u}"' for u in record["units"]]
    out.append("quoted:  # [anchor, h(eading)/t(ext), offset, length, SHA-256 of the source there]")
    for doc_id, rows in record["quoted"].items():
        out.append(f"  {doc_id}:")
        out += [f"    - {json.dumps(row, ensure_ascii=False)}" for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def check_records(corpus: Corpus, records: dict[str, dict]) -> list[str]:
    """The corpus against the recorded fingerprints (no source files needed): what differs, by section."""
    problems = []
    for source, docs in sorted(documents_by_source(corpus).items()):
        record = records.get(source)
        if record is None:
            problems.append(
                f"{RECORDS_DIR}/{Path(source).stem}.yaml: missing: no fingerprints for {source} "
                f"(used by {', '.join(d.id for d in docs)})"
            )
            continue
        for doc in docs:
            problems += _diff_pieces(document_pieces(corpus, doc), record["quoted"].get(doc.id), source)
        extra = set(record["quoted"]) - {d.id for d in docs}
        problems += [
            f"{doc_id}: recorded from {source} but no longer in the corpus" for doc_id in sorted(extra)
        ]
    return problems


def _diff_pieces(pieces: list[Piece], rows: list | None, source: str) -> list[str]:
    if rows is None:
        return [f"{pieces[0].document if pieces else '?'}: no fingerprints recorded from {source}"]
    problems = []
    recorded = [(str(a), k, int(n), str(h)) for a, k, _at, n, h in rows]
    current = [(p.anchor, p.kind, len(normalise(p.text)), digest(normalise(p.text))) for p in pieces]
    by_anchor: dict[str, list[tuple]] = {}
    for r in recorded:
        by_anchor.setdefault(r[0], []).append(r)
    for p, c in zip(pieces, current, strict=True):
        if c not in by_anchor.get(p.anchor, []):
            what = "heading" if p.kind == "h" else "text"
            problems.append(f"{p.where}: {what} differs from the source's fingerprint: {p.text[:50]}")
    if len(current) != len(recorded):
        cur = {(c[0], c[3]) for c in current}
        lost = [r for r in recorded if (r[0], r[3]) not in cur]
        doc = pieces[0].document if pieces else "?"
        where = f" (lost or changed in: {', '.join(sorted({r[0] for r in lost}))})" if lost else ""
        problems.append(f"{doc}: {len(recorded)} pieces recorded, {len(current)} in the corpus{where}")
    return problems


def compare_sources(
    corpus: Corpus,
    sources_dir: str | Path,
    records: dict[str, dict] | None = None,
    only: list[str] | None = None,
) -> list[str]:
    """The corpus against the source files themselves, and each record against its source: what differs
    (`only`: these source files alone)."""
    sources_dir = Path(sources_dir)
    problems = []
    for source, docs in sorted(documents_by_source(corpus).items()):
        if only is not None and source not in only:
            continue
        path = sources_dir / source
        if not path.exists():
            problems.append(f"{source}: not in {sources_dir} (used by {', '.join(d.id for d in docs)})")
            continue
        text = path.read_text(encoding="utf-8")
        fresh, missing = make_record(corpus, source, text, (records or {}).get(source))
        problems += missing
        if records is None:
            continue
        old = records.get(source)
        if old is None:
            problems.append(f"{source}: no record in {RECORDS_DIR}/ (write it with --record)")
            continue
        for key in ("sha256", "chars", "units"):
            if old.get(key) != fresh[key]:
                problems.append(f"{source}: {key}: the source has changed since its record was written")
        if old.get("numbered") != fresh.get("numbered"):
            problems.append(f"{source}: numbered: the record does not match the source")
        norm = normalise(text)
        for doc_id, rows in old["quoted"].items():
            for a, _k, at, n, h in rows:
                if digest(norm[int(at) : int(at) + int(n)]) != str(h):
                    problems.append(f"{doc_id}/{a}: the recorded fingerprint at {at}+{n} is not the source's")
    return problems
