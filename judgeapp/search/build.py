"""Building the index: each section analysed (in forked workers for a large corpus) and written as one
Whoosh segment."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from whoosh import index as whoosh_index

from ..textnorm import (
    fold,
)
from ..yamlload import load_yaml
from .analysis import (
    TITLE_LIGHT,
    Analyzer,
    analysis_version,
    analyzer,
    char_bigrams,
    clip_map,
    count_terms,
    defined_words,
    heading_words,
    kanji_masks,
    kanji_readings,
    katakana_word,
    number_terms,
    own_number_terms,
    spelling_maps,
    title_topic,
    word_pairs,
    word_stem,
)
from .schema import SCHEMA, IndexDoc, TermsField

if TYPE_CHECKING:
    from whoosh.codec.whoosh3 import W3FieldWriter
    from whoosh.index import Index


def _counts(terms: Iterable[str]) -> dict[bytes, int]:
    """A field's terms as Whoosh stores them: each term's bytes and its frequency in the section."""
    return {t.encode("utf-8"): f for t, f in Counter(terms).items()}


def _analyse_doc(an: Analyzer, d: IndexDoc, lexicon: dict, seen: dict) -> dict:
    """One section's fields as the index stores them (term fields as term bytes → frequency), and its
    words' surfaces added to the lexicon. Each analysed word is handled once: the analyzer hands back the
    same `Word` for a word it has seen, and `seen` keeps, by word, its index terms as bytes (forms and
    short units, reading, synonym groups)."""
    body_words = an.words(d.text)
    # (the heading's own number is no word of its title: the number signal finds it)
    title_words = an.words(heading_words(d.title, bool(d.numbers)))
    if d.context:  # an overview: its chapter's heading is its title too (and the topic is the chapter's)
        context_words = an.words(heading_words(d.context, bool(d.numbers)))
        title_words = title_words + context_words
    terms = []
    for ws in (body_words, title_words):
        out = []
        for w in ws:
            t = seen.get(id(w))
            if t is None:
                surface = fold(w.surface)
                for f in w.forms + w.parts:
                    lexicon["words"].setdefault(f, set()).add(surface)
                lexicon["reading"].setdefault(w.reading, set()).add(surface)
                if katakana_word(unicodedata.normalize("NFKC", w.surface), 2):
                    # a loan word: written in katakana in the text (the folded surfaces above no longer say
                    # so: しかし and ただし fold to katakana too)
                    lexicon["loan"].setdefault(w.reading, set()).add(surface)
                for g in w.synonyms:
                    lexicon["syn"].setdefault(str(g), set()).add(surface)
                t = seen[id(w)] = (
                    w,  # kept, so that its id is not reused while `seen` lives
                    tuple(f.encode("utf-8") for f in w.forms + w.parts),
                    w.reading.encode("utf-8"),
                    tuple(str(g).encode("utf-8") for g in w.synonyms),
                )
            out.append(t)
        terms.append(out)
    body, title = terms
    title_grams = char_bigrams(d.title) + (char_bigrams(d.context) if d.context else [])
    return {
        "id": d.id,
        "game": d.game,
        "doc": d.doc,
        # its keys, and its own number within its parent as its heading writes it (② 【警告】: ~2)
        "number": " ".join(number_terms(d.numbers) + own_number_terms(d.title, d.numbers)),
        "syn": Counter(g for t in body + title for g in t[3]),
        "kanji": _counts(k for w in body_words + title_words if (k := word_stem(w))),
        "pairs": _counts(word_pairs(body_words) + word_pairs(title_words)),
        "counts": _counts(count_terms(body_words)),
        "title": Counter(f for t in title if t[0].forms[0] not in TITLE_LIGHT for f in t[1]),
        "words": Counter(f for t in body for f in t[1]),
        "reading": Counter(t[2] for t in body + title),
        # the short units' readings of the words that split (a kana query's ていし finds 停止中)
        "part_reading": _counts(r for w in body_words + title_words for r in w.part_readings),
        "grams": _counts(title_grams + char_bigrams(d.text)),
        "title_grams": _counts(title_grams),
        "title_topic": title_topic(context_words if d.context else title_words),
        "defines": " ".join(defined_words(an, d.text)),
        "title_text": d.title,
        "doc_title": d.doc_title,
        "text": d.text,
    }


# The fields given as counted terms (`TermsField`): their postings travel and are written as arrays.
_COUNTED = tuple(sorted(n for n in SCHEMA.names() if isinstance(SCHEMA[n], TermsField)))


@dataclass
class _Batch:
    """Analysed sections, ready for the writer: each section's row of the other fields (ids, numbers, the
    title's topic) and, per counted field, its postings as arrays (the batch's terms, then per posting its
    term's place among them, its section's place in the batch and its frequency), in section order."""

    rows: list[dict]
    columns: dict[str, tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray]]


def _batch(rows: list[dict]) -> _Batch:
    """Take the counted fields out of the rows, as arrays."""
    columns = {}
    for name in _COUNTED:
        vocab: dict[bytes, int] = {}
        place = vocab.setdefault
        tids: list[int] = []
        docs: list[int] = []
        freqs: list[int] = []
        for i, row in enumerate(rows):
            value = row.pop(name, None)
            if not value:
                continue
            if not isinstance(value, dict):  # terms not yet counted: as TermsField.index counts them
                value = _counts(value.split() if isinstance(value, str) else value)
            tids += [place(t, len(vocab)) for t in value]
            freqs += value.values()
            docs += [i] * len(value)
        columns[name] = (
            list(vocab),
            np.array(tids, dtype=np.int32),
            np.array(docs, dtype=np.int32),
            np.array(freqs, dtype=np.int32),
        )
    return _Batch(rows, columns)


def _merged(batches: list[_Batch], name: str, count: int):
    """A counted field's postings over all batches: the terms in byte order, and per term (in that order)
    the slice of the posting arrays (documents, frequencies) that holds its postings in document order;
    and each document's length (its frequencies' sum)."""
    vocab: dict[bytes, int] = {}
    place = vocab.setdefault
    parts_t, parts_d, parts_f = [], [], []
    offset = 0
    for b in batches:
        terms, tids, docs, freqs = b.columns[name]
        ids = np.array([place(t, len(vocab)) for t in terms], dtype=np.int64)
        parts_t.append(ids[tids] if len(tids) else tids.astype(np.int64))
        parts_d.append(docs.astype(np.int64) + offset)
        parts_f.append(freqs.astype(np.int64))
        offset += len(b.rows)
    terms = list(vocab)
    tids = np.concatenate(parts_t) if parts_t else np.zeros(0, np.int64)
    docs = np.concatenate(parts_d) if parts_d else np.zeros(0, np.int64)
    freqs = np.concatenate(parts_f) if parts_f else np.zeros(0, np.int64)
    order = sorted(range(len(terms)), key=terms.__getitem__)
    rank = np.empty(len(terms), dtype=np.int64)
    rank[order] = np.arange(len(terms))
    ranks = rank[tids]
    by = np.argsort(ranks, kind="stable")  # grouped by term (in byte order), each term's in document order
    bounds = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(ranks, minlength=len(terms)), out=bounds[1:])
    lengths = np.bincount(docs, weights=freqs, minlength=count).astype(np.int64)
    return [terms[i] for i in order], bounds, docs[by], freqs[by], lengths


_LENGTH_OF_BYTE = None


def _stored_lengths(lengths: np.ndarray) -> np.ndarray:
    """What the lengths column gives back for each length (`byte_to_length(length_to_byte(n))`, 0 for 0)."""
    global _LENGTH_OF_BYTE
    from whoosh.util.numeric import _length_byte_cache

    if _LENGTH_OF_BYTE is None:
        _LENGTH_OF_BYTE = np.array(_length_byte_cache, dtype=np.int64)
    table = _LENGTH_OF_BYTE
    b = np.where(lengths >= 106374, 255, np.searchsorted(table, lengths, side="left"))
    return np.where(lengths > 0, table[np.minimum(b, 255)], 0)


# A counted field's postings while they are encoded (`_encode_terms`), read by the forked encoding workers.
_ENCODING: dict[str, tuple] = {}


def _encode_terms(task: tuple[str, int, int, int, int]) -> list[tuple[bytes, tuple]]:
    """Terms `lo` to `hi` (in byte order) of a counted field, encoded as `W3PostingsWriter` encodes them:
    per term, its postings' bytes (block by block: each block's pickled ids, weights and values,
    compressed, after its pickled block info) and its term info's figures (weight, document count, least
    and most length, highest weight, first and last document). The blocks' figures (deltas, highest and
    lowest frequency and length, sums) are computed for the range at once; each block's lists are slices
    of them."""
    import pickle
    import zlib

    from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC
    from whoosh.system import pack_int
    from whoosh.util.numeric import length_to_byte

    name, lo, hi, limit, level = task
    terms, bounds, docs, freqs, lens = _ENCODING[name]
    bounds = bounds[lo : hi + 1].tolist()
    base = bounds[0]
    docs = docs[base : bounds[-1]]
    freqs = freqs[base : bounds[-1]]
    lens = lens[base : bounds[-1]]
    bounds = [x - base for x in bounds]
    if not len(docs):
        return []
    starts: list[int] = []
    for k in range(len(bounds) - 1):
        starts += range(bounds[k], bounds[k + 1], limit)
    at = np.array(starts, dtype=np.int64)
    deltas = np.diff(docs, prepend=0)
    deltas[at] = docs[at]  # each block's ids from 0 (`delta_encode` of the block)
    fmax = np.maximum.reduceat(freqs, at).tolist()
    fmin = np.minimum.reduceat(freqs, at).tolist()
    fsum = np.add.reduceat(freqs, at).tolist()
    lmax = np.maximum.reduceat(lens, at).tolist()
    big = np.iinfo(np.int64).max
    lmin = np.minimum.reduceat(np.where(lens > 0, lens, big), at).tolist()
    deltas = deltas.tolist()
    weights = freqs.astype(np.float64).tolist()
    values = freqs.astype(">u4").tobytes()
    docs = docs.tolist()
    dumps = pickle.dumps
    compress = zlib.compress
    encoded = []
    j = 0  # the block
    for k in range(len(bounds) - 1):
        first, end = bounds[k], bounds[k + 1]
        out = [WHOOSH3_HEADER_MAGIC]
        weight = 0.0
        minlength = None
        maxlength = 0
        maxweight = 0
        for a in range(first, end, limit):
            b = min(a + limit, end)
            top, low = fmax[j], fmin[j]
            w = None if top == 1 else float(top) if low == top else tuple(weights[a:b])
            data = dumps((tuple(deltas[a:b]), w, values[4 * a : 4 * b]), 2)
            if level:
                data = compress(data, level)
            bmin = None if lmin[j] == big else lmin[j]
            bmax = lmax[j]
            info = dumps(
                (b - a, docs[b - 1], float(top), level, length_to_byte(bmin), length_to_byte(bmax)), 2
            )
            size = len(info) + len(data)
            out += [pack_int(-size if b == end else size), info, data]
            weight += fsum[j]
            minlength = bmin if minlength is None else min(minlength, bmin)
            maxlength = max(maxlength, bmax)
            maxweight = max(maxweight, float(top))
            j += 1
        stats = (float(weight), end - first, minlength, maxlength, maxweight, docs[first], docs[end - 1])
        encoded.append((b"".join(out), stats))
    return encoded


def _encoding_tasks(
    name: str, limit: int, level: int, parts: int = 2
) -> list[tuple[str, int, int, int, int]]:
    """A counted field's terms cut into `parts` ranges of about as many postings each."""
    terms, bounds = _ENCODING[name][:2]
    cuts = np.searchsorted(bounds, [bounds[-1] * i / parts for i in range(1, parts)]).tolist()
    edges = [0, *(min(max(c, 0), len(terms)) for c in cuts), len(terms)]
    return [(name, a, b, limit, level) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def _write_encoded(fw: W3FieldWriter, terms: list[bytes], encoded: list[tuple[bytes, tuple]]) -> None:
    """Write a counted field's encoded terms (`_encode_terms`) as `W3FieldWriter.finish_term` does: the
    postings, then the term's info (with where its postings are) in the terms table."""
    from whoosh.codec.whoosh3 import W3TermInfo
    from whoosh.system import pack_ushort

    postfile = fw._postfile
    tindex_add = fw._tindex.add
    fieldid = pack_ushort(fw._fieldid)
    start = postfile.tell()
    for tbytes, (blob, stats) in zip(terms, encoded, strict=True):
        postfile.write(blob)
        ti = W3TermInfo()
        ti._weight, ti._df, ti._minlength, ti._maxlength, ti._maxweight, ti._minid, ti._maxid = stats
        ti.set_extent(start, len(blob))
        tindex_add(fieldid + tbytes, ti.to_bytes())
        start += len(blob)


def _write_segment(
    ix: Index, docs: list[IndexDoc], batches: Iterable[_Batch], vocabulary: dict[str, list[str]] | None = None
) -> int:
    """Write the sections as the index's one segment, through Whoosh's codec API (the per-document writer
    for stored fields and lengths, the field writer for the postings, then the table of contents), exactly
    as `SegmentWriter.add_document` and `commit` would write them: the same files, read by Whoosh's own
    searcher with the same results. What it leaves out is the writer's general machinery (a posting pool
    of one tuple per posting, sorted, then each posting's length read back from disk), which took most of a
    large build; the term fields come already counted, as arrays (`_Batch`), and each term's posting blocks
    are encoded from slices of them (`_encode_terms`). `vocabulary`, when given, receives each indexed field's
    terms (but the ids'), for the searcher to know which terms the index has without asking Whoosh."""
    from whoosh.codec import default_codec
    from whoosh.index import TOC, clean_files
    from whoosh.util.numeric import byte_to_length, length_to_byte

    schema = ix.schema
    storage = ix.storage
    codec = default_codec()
    generation = ix.latest_generation() + 1
    segment = codec.new_segment(storage, ix.indexname)
    perdoc = codec.per_document_writer(storage, segment)
    names = sorted(schema.names())
    fields = {name: schema[name] for name in names}
    batches = list(batches)
    count = sum(len(b.rows) for b in batches)
    merged = {name: _merged(batches, name, count) for name in _COUNTED}
    # The counted fields' postings are encoded while the documents are written: in two forked workers for
    # a large build (as its analysis is), here otherwise.
    _ENCODING.clear()
    for name, (terms, bounds, pdocs, pfreqs, doc_lengths) in merged.items():
        _ENCODING[name] = (terms, bounds, pdocs, pfreqs, _stored_lengths(doc_lengths)[pdocs])
    tasks = [t for name in _COUNTED for t in _encoding_tasks(name, codec._blocklimit, codec._compression)]
    tasks.sort(key=lambda t: _ENCODING[t[0]][1][t[1]] - _ENCODING[t[0]][1][t[2]])  # the largest first
    collect = _in_workers(_encode_terms, tasks) if _can_fork(count) else None
    # the other indexed fields, per field: term bytes → its postings in document order (document, weight,
    # value bytes)
    postings: dict[str, dict[bytes, list]] = {n: {} for n in names if fields[n].indexed and n not in merged}
    lengths: dict[str, list[int | None]] = {n: [None] * count for n in postings}
    counted_lengths = {name: m[4].tolist() for name, m in merged.items()}
    stored = {"title_text": "title", "doc_title": "doc_title", "text": "text"}
    rows = (row for b in batches for row in b.rows)
    for docnum, (row, d) in enumerate(zip(rows, docs, strict=True)):
        perdoc.start_doc(docnum)
        for name in names:
            field = fields[name]
            if name in merged:
                perdoc.add_field(name, field, None, counted_lengths[name][docnum])
                continue
            value = getattr(d, stored[name]) if name in stored else row.get(name)
            if value is None:
                continue
            length = 0
            if field.indexed:
                field_postings = postings[name]
                for tbytes, freq, weight, vbytes in field.index(value):
                    if field.scorable:
                        length += freq
                    plist = field_postings.get(tbytes)
                    if plist is None:
                        field_postings[tbytes] = [(docnum, weight, vbytes)]
                    else:
                        plist.append((docnum, weight, vbytes))
                if length:
                    lengths[name][docnum] = byte_to_length(length_to_byte(length))
            perdoc.add_field(name, field, value if field.stored else None, length)
        perdoc.finish_doc()
    perdoc.close()
    segment.set_doc_count(count)

    try:
        results = collect() if collect is not None else [_encode_terms(t) for t in tasks]
    finally:
        _ENCODING.clear()
    encoded: dict[str, list] = {name: [] for name in merged}
    for task, part in sorted(zip(tasks, results, strict=True), key=lambda tr: tr[0][:2]):
        encoded[task[0]] += part
    writer = codec.field_writer(storage, segment)
    for name in sorted([*postings, *merged]):
        writer.start_field(name, fields[name])
        if vocabulary is not None and name != "id":
            vocabulary[name] = [
                t.decode("utf-8") for t in (merged[name][0] if name in merged else postings[name])
            ]
        if name in merged:
            _write_encoded(writer, merged[name][0], encoded[name])
        else:
            field_lengths = lengths[name]
            add = writer.add
            field_postings = postings[name]
            for tbytes in sorted(field_postings):
                writer.start_term(tbytes)
                for docnum, weight, vbytes in field_postings[tbytes]:
                    add(docnum, weight, vbytes if vbytes is not None else b"", field_lengths[docnum])
                writer.finish_term()
        writer.finish_field()
    writer.close()
    if segment.should_assemble():
        segment.create_compound_file(storage)
        segment.compound = True
    TOC(schema, [segment], generation).write(storage, ix.indexname)
    clean_files(storage, ix.indexname, generation, [segment])
    storage.temp_storage(f"{ix.indexname}.tmp").destroy()
    return count


# A build of at least this many sections analyses them in two worker processes (in batches, kept in order),
# then this process writes them while two workers encode the postings; the real corpus (a few hundred
# sections) is analysed and encoded here.
PARALLEL_FROM = 2000
_BATCH = 250
_STORED_ROW = ("title_text", "doc_title", "text")


def _can_fork(sections: int) -> bool:
    """Whether a build of this many sections works in forked workers (see `PARALLEL_FROM`)."""
    import multiprocessing

    return (
        sections >= PARALLEL_FROM
        and threading.active_count() == 1  # forking is safe only without other threads
        and "fork" in multiprocessing.get_all_start_methods()
    )


def _in_workers(fn: Callable[[Any], Any], items: list):
    """`fn` over `items` in two forked worker processes, started now; the function returned collects the
    results, in order. A worker that dies (the OOM killer, a signal) does not hang the build: the executor
    reports it (BrokenProcessPool) and what is missing is done here, in this process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
    futures = [executor.submit(fn, item) for item in items]

    def collect() -> list:
        try:
            out = []
            for item, f in zip(items, futures, strict=True):
                try:
                    out.append(f.result())
                except BrokenProcessPool:
                    out.append(fn(item))
            return out
        finally:
            executor.shutdown(wait=True, cancel_futures=True)

    return collect


def _analyse_batch(docs: list[IndexDoc]) -> tuple[_Batch, dict]:
    """A part of a build (a worker's, in a large one): the batch's rows (without the stored texts, which
    the writer has) and postings arrays, and the batch's lexicon."""
    lexicon: dict[str, dict[str, set[str]]] = {"words": {}, "reading": {}, "syn": {}, "loan": {}}
    an, seen = analyzer(), {}
    rows = []
    for d in docs:
        row = _analyse_doc(an, d, lexicon, seen)
        for key in _STORED_ROW:
            del row[key]
        rows.append(row)
    return _batch(rows), lexicon


def _analysed_batches(docs: list[IndexDoc], lexicon: dict) -> list[_Batch]:
    """The sections analysed, in order, in batches (`_Batch`), their words added to `lexicon`."""

    if not _can_fork(len(docs)):
        results = [_analyse_batch(docs)]
    else:
        analyzer()  # loaded once, before the workers are forked
        batches = [docs[i : i + _BATCH] for i in range(0, len(docs), _BATCH)]
        # Every batch is collected before any is written: while this thread waits, the pool's result
        # thread has the interpreter to itself (consumed one by one, each batch's transfer waited for
        # the writing thread to let go of it, which made the build slower than a serial one).
        results = _in_workers(_analyse_batch, batches)()
    out = []
    for batch, lex in results:
        for field, entries in lex.items():
            mine = lexicon[field]
            for term, surfaces in entries.items():
                have = mine.get(term)
                if have is None:
                    mine[term] = surfaces
                else:
                    have |= surfaces
        out.append(batch)
    return out


def build_index(docs: Iterable[IndexDoc], path: str | Path, version: str = "") -> int:
    """Build a fresh index at `path` (replacing what is there once complete); return the section count."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    lexicon: dict[str, dict[str, set[str]]] = {"words": {}, "reading": {}, "syn": {}, "loan": {}}
    docs = list(docs)
    try:
        ix = whoosh_index.create_in(str(tmp), SCHEMA)
        terms: dict[str, list[str]] = {}
        count = _write_segment(ix, docs, _analysed_batches(docs, lexicon), terms)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    lex = {f: {t: sorted(s) for t, s in m.items()} for f, m in lexicon.items()}
    lex["spellings"] = spelling_maps(lex["reading"], lex["words"])
    long_words = [f for f in lex["words"] if len(f) >= 6 and katakana_word(f)]
    an = analyzer()
    compounds = [(f, parts) for f in long_words for w in an.words(f)[:1] if len(parts := w.parts) > 1]
    lex["spellings"]["clips"] = clip_map(terms.get("pairs", ()), compounds)
    lex["spellings"]["kanji_readings"] = kanji_readings(lex["reading"])
    lex["spellings"]["kanji_masks"] = kanji_masks(lex["words"], terms.get("pairs", ()))
    lex["terms"] = terms
    (tmp / "lexicon.json").write_text(json.dumps(lex, ensure_ascii=False), encoding="utf-8")
    (tmp / "meta.json").write_text(
        json.dumps({"corpus": version, "analyzer": analysis_version(), "sections": count})
    )
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return count


def index_is_current(path: str | Path, version: str) -> bool:
    meta = Path(path) / "meta.json"
    try:
        data = json.loads(meta.read_text())
    except (OSError, ValueError):
        return False
    return data.get("corpus") == version and data.get("analyzer") == analysis_version()


def ensure_index(
    docs_factory: Callable[[], Iterable[IndexDoc]], path: str | Path, version: str, force: bool = False
) -> bool:
    """Build the index if it is missing or was built from another corpus (or `force`); True when built.

    Several server processes may start at once, or `judgeapp index` may run beside them: a file lock lets
    one build while the others wait. A running server keeps the index it opened until it restarts.
    """
    path = Path(path)
    if not force and index_is_current(path, version):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and index_is_current(path, version):
            return False
        build_index(docs_factory(), path, version)
        return True


def load_synonyms(path: str | Path) -> list[tuple[list[str], list[str]]]:
    """The reviewed synonym list: (judges' words, phrases the texts use)."""
    data = load_yaml(Path(path)) or []  # strict: a duplicate key is refused, naming the file
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or set(entry) != {"words", "means"}:
            raise ValueError(f"{path}: entry {i}: needs exactly 'words' and 'means'")
        out.append(([str(w) for w in entry["words"]], [str(m) for m in entry["means"]]))
    return out
