"""The app at the venue with no signal: what the service worker precaches, and the compact indexes that
answer the search form and the situation lookup in the browser.

- `/sw.js`: the service worker (scope `/`), with the offline version (corpus, policies, assets) written into
  it, so a new corpus makes a new worker that replaces the cache in one step.
- `/offline/precache.json`: every page to keep: the rules library (each game, document and section), the
  wizard (each step and outcome at its normalised URL, see `wizard_pages`), training, deck check, the assets;
  and, for a judge signed in to an event, that event's pages and its record form for each player.
- `/offline/wizard.json`: each game's question tree (node → answer → next node or outcome), so that the
  worker normalises any wizard URL (answers in any order, extra parameters) to the cached page.
- `/offline/search.json` and `/offline/situations.json`: the sections (or infractions) analysed by the same
  analysis as the server's index (`judgeapp.search.analyzer().words()`): each text's words (every form the
  server indexes), their readings, the title's words, the plain text for the bigram tier, the section
  numbers, and the synonym groups with their phrases already analysed; for the search form also what the
  server's query signals need and the browser cannot analyse: the query stop and question words, each
  title's topic, and the words of each reading that a title can match (a query typed in kana).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, render_template, request, url_for

from .assets import current_assets
from .library import current_library, index_docs, situation_docs
from .lookup import ENGLISH_STOP, NONE_MESSAGE, NONE_MESSAGE_ALL, ONE_WORD, level_issuer, level_meta
from .lookup import STOP as LOOKUP_STOP
from .search import (
    NUMBERING,
    QUERY_STOP,
    QUESTION_WORDS,
    TITLE_LIGHT,
    analyzer,
    load_synonyms,
    number_terms,
    title_topic,
)
from .search.analysis import KANJI_RE, SAME_COUNTER, heading_words, own_number_terms, sense_in_auxiliary
from .search.games import ABOUT_A_GAME, ASKING_TAILS, scope_names
from .search.schema import WEIGHT, IndexDoc
from .textnorm import fold, is_kana, squash

bp = Blueprint("offline", __name__)
# The offline lookup's "nothing fits" (static/offline-search.js `fits`): the share of the story's weight that
# a game's evidence holds at all, under which nothing fits (with two of the story's words found; with one, the
# higher share). Below every story the server answers in the tables it was calibrated on (every
# tests/cases/situations*.yaml but the reporting halves and their none tables: the lowest 0.18 with two words,
# after the lookup passes of 2026-12-01 that answer stories the offline check cannot weigh as the server does)
# and above 16 of the 24 of situations_none.yaml (one word: 0.55 since the eighth lookup pass, 2026-12-02):
# saying nothing fits offline for a story the server answers is the worse mistake (docs/offline.md, "Nothing fits, offline").
OFFLINE_NONE_THRESHOLD = 0.17
OFFLINE_NONE_THRESHOLD_ONE = 0.55
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


def _synonyms_digest() -> str:
    """The synonym list's bytes (the offline exports are built from it too), read once per change of the file."""
    path = current_app.config.get("SYNONYMS_PATH") or ""
    try:
        return _file_digest(path, Path(path).stat().st_mtime_ns) if path else ""
    except OSError:
        return ""


@lru_cache(maxsize=8)
def _file_digest(path: str, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def offline_version() -> str:
    """Corpus, policies, the synonym list and assets in one string: the cache's name (a phone keeps its
    offline exports until it changes)."""
    lib = current_library()
    policies = lib.policies.version if lib.policies else ""
    raw = f"{lib.corpus.version}|{policies}|{current_assets().digest()}|{_synonyms_digest()}"
    return f"{lib.corpus.version}-{hashlib.sha256(raw.encode()).hexdigest()[:10]}"


def wizard_tree() -> dict:
    """Each game's tree: {game: {start, nodes: {node: {answer: {"next": id} | {"outcome": id}}}}}."""
    out = {}
    for game, policy in current_library().policies.games.items():
        nodes = {}
        for node in policy.nodes.values():
            nodes[node.id] = {
                a.id: ({"outcome": a.outcome} if a.outcome else {"next": a.next}) for a in node.answers
            }
        out[game] = {"start": policy.wizard.start, "nodes": nodes}
    return out


def wizard_pages() -> list[str]:
    """Every step and outcome page at its normalised URL: the answers on the path from the start, in path
    order (the order the wizard's own links use), nothing else; and each outcome without answers."""
    urls = []
    for game, policy in current_library().policies.games.items():
        step = url_for("wizard.step", game=game)
        urls += [url_for("wizard.graph", game=game), url_for("wizard.training", game=game)]
        stack = [(policy.wizard.start, [])]
        while stack:
            node_id, path = stack.pop()
            params = dict(path)
            urls.append(f"{step}?{urlencode(params)}" if params else step)
            for a in policy.nodes[node_id].answers:
                p = path + [(node_id, a.id)]
                if a.outcome:
                    outcome = url_for("wizard.outcome", game=game, infraction_id=a.outcome)
                    urls.append(f"{outcome}?{urlencode(p)}")
                else:
                    stack.append((a.next, p))
        urls += [url_for("wizard.outcome", game=game, infraction_id=i) for i in policy.infractions]
    return list(dict.fromkeys(urls))


def training_runs() -> dict:
    """For each game, the one run of (up to) ten scenarios the phone keeps for practice with no signal, and
    what the worker needs to answer its pages: the expected answers, the labels, the situations."""
    import random

    from .wizard.routes import choices, expected

    out = {}
    version = offline_version()
    for game, policy in current_library().policies.games.items():
        ids = [s.id for s in policy.training.scenarios]
        if not ids:
            continue
        run = random.Random(f"{version}/{game}").sample(ids, min(10, len(ids)))
        scenarios = {s.id: s for s in policy.training.scenarios}
        out[game] = {
            "base": url_for("wizard.training", game=game, run=",".join(run)),
            "run": run,
            "expected": [expected(policy, scenarios[r]) for r in run],
            "choices": [cid for cid, _ in choices(policy)],
            "labels": dict(choices(policy)),
            "situations": [scenarios[r].situation for r in run],
            "infractions": [
                [scenarios[r].infraction, policy.infractions[scenarios[r].infraction].name] for r in run
            ],
        }
    return out


def training_pages() -> list[str]:
    """Every page of each kept run, at the URL the worker looks it up by: each question as reached with the
    right answers before it, each answer's feedback, and the summary of a run answered right."""
    urls = []
    for t in training_runs().values():
        base, exp, n = t["base"], t["expected"], len(t["run"])

        def at(answers, nxt, base=base):
            q = {"a": ",".join(answers)} if answers else {}
            if nxt:
                q["next"] = "1"
            return f"{base}&{urlencode(q)}" if q else base

        urls.append(at([], False))
        for k in range(1, n + 1):
            urls.append(at(exp[:k], True))  # question k+1, or the summary after the last
            urls += [at(exp[: k - 1] + [c], False) for c in t["choices"]]  # feedback for each answer
    return urls


def library_pages() -> list[str]:
    lib = current_library()
    urls = [
        "/",
        url_for("rules.search"),
        url_for("wizard.choose"),
        url_for("wizard.lookup_all"),
        url_for("wizard.training_choose"),
        url_for("wizard.decks"),
        url_for("offline.missing"),
    ]
    urls += [url_for("wizard.decks", game=g) for g in (lib.decks or {})]
    for game in lib.corpus.games.values():
        urls.append(game.url)
        urls += [d.url for d in game.documents]
    urls += [s.url for s in lib.corpus.sections.values()]
    return urls


def event_pages() -> list[str]:
    """For a judge signed in to an event: the event, its players and the record form for each of them."""
    from .events.auth import current_db, current_staff
    from .events.permissions import can_record
    from .events.players import find_players

    staff = current_staff()
    if staff is None:
        return []
    eid = staff.event_id
    urls = [url_for("events.show", event_id=eid)]
    if can_record(staff):
        urls.append(url_for("events.record", event_id=eid))
    for p in find_players(current_db(), eid, ""):
        urls.append(url_for("events.player", event_id=eid, player_id=p.id))
        if can_record(staff):
            urls.append(url_for("events.record", event_id=eid, player=p.id))
    return urls


@bp.get("/offline/precache.json")
def precache():
    """What the service worker keeps; `?part=event` gives only the signed-in judge's event pages."""
    bundle = None
    if request.args.get("part") == "event":
        urls = event_pages()
    else:
        urls = (
            library_pages()
            + wizard_pages()
            + training_pages()
            + current_assets().urls()
            + [
                "/manifest.webmanifest",
                url_for("offline.search_index"),
                url_for("offline.situation_index"),
                url_for("offline.wizard_json"),
                url_for("offline.training_json"),
            ]
        )
        bundle = url_for("offline.pages_bundle", v=offline_version())
    resp = current_app.json.response(
        {"version": offline_version(), "urls": list(dict.fromkeys(urls)), "bundle": bundle}
    )
    resp.headers["Cache-Control"] = "private, no-cache"
    return resp


_bundles: dict[str, bytes] = {}


@bp.get("/offline/pages.json")
def pages_bundle():
    """Every library and wizard page in one answer ({url: html}): one request instead of hundreds (on venue
    Wi-Fi the round trips, not the bytes, are what takes time), and one compressed stream. The pages are
    the same for everyone (rendered without cookies) and kept per offline version."""
    version = offline_version()
    body = _bundles.get(version)
    if body is None:
        client = current_app.test_client(use_cookies=False)
        pages = {}
        for url in dict.fromkeys(library_pages() + wizard_pages() + training_pages()):
            r = client.get(url)
            if r.status_code == 200:
                pages[url] = r.get_data(as_text=True)
        body = json.dumps(
            {"version": version, "pages": pages}, ensure_ascii=False, separators=(",", ":")
        ).encode()
        _bundles.clear()
        _bundles[version] = body
    resp = Response(body, mimetype="application/json")
    if request.args.get("v") == version:  # the version is in the URL: the answer never changes
        resp.headers["Cache-Control"] = "public, max-age=31536000, immutable"
    return resp


@bp.get("/offline/training.json")
def training_json():
    return current_app.json.response(training_runs())


@bp.get("/offline/wizard.json")
def wizard_json():
    return current_app.json.response(wizard_tree())


def _stored_length(n: int) -> int:
    """A field length as the server's index scores with it (Whoosh keeps one byte per length)."""
    try:
        from whoosh.util.numeric import byte_to_length, length_to_byte
    except ImportError:  # an index without the approximation: the exact length
        return n
    return byte_to_length(length_to_byte(n)) if n else 0


def _bigrams(text: str) -> list[str]:
    s = squash(text)
    return [s[i : i + 2] for i in range(len(s) - 1)] if len(s) > 1 else ([s] if s else [])


def _analysed(text: str) -> tuple[list[str], list[str]]:
    """A text's index terms (every form and short-unit part of each word) and its words' readings."""
    words, readings = [], []
    for w in analyzer().words(text):
        words.extend(w.forms + w.parts)
        readings.append(w.reading)
    return words, readings


def _surfaces(text: str) -> dict[str, list[str]]:
    """Each word's folded surface → [its forms, its short-unit parts] as the server's index holds them (the
    browser, which has no dictionary, reads a query's words with it)."""
    out: dict[str, list[list[str]]] = {}
    for w in analyzer().words(text):
        out.setdefault(fold(w.surface), [list(w.forms), list(w.parts)])
        for f in w.forms:
            out.setdefault(f, [[f], []])
    return out


def build_index_export(docs, synonyms, search: bool = True) -> dict:
    """The compact index: a vocabulary, and each document's terms as numbers into it. For the
    search form, also the words the server's query leaves out (the situation lookup, another engine, keeps the
    browser's own short list)."""
    vocab: dict[str, int] = {}

    def ids(terms: list[str]) -> list[int]:
        return [vocab.setdefault(t, len(vocab)) for t in terms]

    out_docs, surfaces, readings, spoken = [], {}, {}, {}
    for d in docs:
        if search:
            for text in (d.text, d.title):
                for w in analyzer().words(text):
                    spoken.setdefault(w.reading, set()).add(fold(w.surface))
        words, reads = _analysed(d.text)
        # (the search's titles leave out the heading's own number, `search.heading_words`; the lookup's keep it)
        # (the server's title field also leaves out the heading's wording, 〜に関して, `TITLE_LIGHT`: kept here, where
        # leaving it out moved two of the agreement's rows away from the server's first result)
        title_words, title_reads = _analysed(heading_words(d.title, search and bool(d.numbers)))
        for text in (d.text, d.title):
            for s, forms in _surfaces(text).items():
                surfaces.setdefault(s, forms)
        for r in reads + title_reads:
            readings[r] = 1
        grams = len(_bigrams(d.title)) + len(_bigrams(d.text))
        out_docs.append(
            {
                "id": d.id,
                "game": d.game,
                "title": d.title,
                "doc": d.doc_title,
                "text": d.text,
                "num": number_terms(d.numbers) + (own_number_terms(d.title, d.numbers) if search else []),
                "w": ids(words),
                "t": ids(title_words),
                "r": ids(reads + title_reads),
                # Field lengths as a Whoosh index stores them (one byte each: an approximation), for BM25F.
                "dl": {
                    f: _stored_length(n)
                    for f, n in (
                        ("w", len(words)),
                        ("t", len(title_words)),
                        ("r", len(reads) + len(title_reads)),
                        ("g", grams),
                    )
                },
            }
        )
        if search:  # the title's topic words (`judgeapp.search.title_topic`), for the search form
            out_docs[-1]["tp"] = title_topic(analyzer().words(d.title))
    syn = []
    for keys, means in synonyms:
        key_readings = ["".join(w.reading for w in analyzer().words(k)) for k in keys]
        # (a key whose auxiliary carries its sense, 持ってった, is recognised as typed: no lemma, no stem)
        plain = [not sense_in_auxiliary(k) for k in keys]
        key_lemmas = [
            [w.forms[0] for w in analyzer().words(k)] if p else [] for k, p in zip(keys, plain, strict=True)
        ]
        # A one-word key's stem (投げる → 投げ, ナグル → ナグ): the browser has no dictionary to find 投げた.
        stems = []
        for k, p in zip(keys, plain, strict=True):
            ws = analyzer().words(k)
            lemma = ws[0].forms[0] if len(ws) == 1 and p else ""
            if len(lemma) >= 2 and lemma[-1] in "ウクスツヌフムユルグズブプイ" and not is_kana(lemma):
                stems += [ws[0].forms[0][:-1], ws[0].reading[:-1]]
        syn.append(
            {
                "keys": keys,
                "readings": key_readings,
                "lemmas": key_lemmas,
                "stems": [s for s in dict.fromkeys(stems) if len(s) >= 2],
                "means": [[list(w.forms + w.parts) for w in analyzer().words(m)] for m in means],
            }
        )
    out = {
        "vocab": list(vocab),
        "docs": out_docs,
        "surfaces": surfaces,
        "readings": list(readings),
        "synonyms": syn,
    }
    vocab_list = out["vocab"]
    if search:
        # The words a query does without (grammar, question words: 何, 誰), as the search leaves them out; the
        # word after a question word is a counter asked for (何点: 点), which ranks but is not required.
        out["stop"] = sorted(QUERY_STOP)
        out["question"] = sorted(QUESTION_WORDS)
        out["same_counter"] = SAME_COUNTER  # a counter said for the other (2回: ２度)
        # A title's topic leaves out the heading's wording (〜に関して) and numbering: the query's topic too.
        out["light"] = sorted(TITLE_LIGHT)
        out["numbering"] = NUMBERING.pattern
        # What a query in kana may be in a title (でんどう: 殿堂): the first three words of each reading, as the
        # server's lexicon lists them (a reading that is only its own spelling is left out).
        # Only the words that some title can match (as a word or by its characters): the rest find nothing.
        in_titles = {vocab_list[t] for d in out_docs for t in d["t"]}
        title_grams = {g for d in docs for g in _bigrams(d.title)}

        def in_a_title(x: str) -> bool:
            return x in in_titles or (len(x) >= 2 and all(g in title_grams for g in _bigrams(x)))

        out["spoken"] = {
            r: kept
            for r, ss in spoken.items()
            if ss != {r} and (kept := [x for x in sorted(ss)[:3] if in_a_title(x)])
        }
    return out


def synonym_terms(
    synonyms: list[tuple[list[str], list[str]]], terms: dict[str, tuple[int, set[str]]]
) -> dict[str, tuple[int, set[str]]]:
    """The synonym list's judges' words as evidence terms (the server's lookup reads them as the phrases they
    stand for): a word is found where one of its phrases is itself a term of the evidence (胸ぐら where 暴力
    is, ギャラリー where 観客 is), weighing no more than that phrase (its line count, or the word's own if
    higher). A phrase is matched whole, never by a word inside it (相手の悪口 is not 相手). A word that holds
    terms of its own (英語版: 英語) is left to them: read whole, it would change how the browser cuts the story."""

    def holds_terms(k: str) -> bool:
        return any(k[i:j] in terms for i in range(len(k)) for j in range(i + 2, len(k) + 1) if k[i:j] != k)

    out: dict[str, tuple[int, set[str]]] = {}
    for keys, means in synonyms:
        found = [terms[f] for f in map(fold, means) if f in terms]
        if not found:
            continue
        df = max(d for d, _ in found)
        games = set().union(*(g for _, g in found))
        for k in map(fold, keys):
            if len(k) > 1 and (k in terms or not holds_terms(k)):
                own_df, own_games = out.get(k) or terms.get(k) or (df, set())
                out[k] = (max(own_df, df), own_games | games)
    return out


def word_groups_export(lookup, synonyms, terms: dict[str, tuple[int, set[str]]], games: list[str]) -> dict:
    """A story's word found through its dictionary synonym group, as the server's lookup finds it (アタック where
    a text says 攻撃: `Lookup._coverage_of`, 0.8 of the word): each word of the evidence and each one-word key of
    the synonym list by its first form → [the lines that hold its groups, the games whose evidence holds them
    and not the word] (the browser has no dictionary to read the groups), where that adds a game or, for a
    word no line spells, a weight (the nothing-fits test weighs it as its group: `Lookup._word_weights`); and
    the synonym list's keys written in hiragana (うそ, わざと), which the server finds spelled anywhere in a story
    (the browser reads hiragana inside a story as grammar, but these)."""
    _, group_terms = lookup.evidence_terms(groups=True)
    forms = lookup.word_groups()
    keys = []
    for ks, _ in synonyms:
        for k in ks:
            ws = analyzer().words(k)
            if len(ws) == 1 and ws[0].synonyms:
                forms.setdefault(ws[0].forms[0], tuple(f"g:{g}" for g in ws[0].synonyms))
            if len(k) > 1 and all("\u3041" <= ch <= "\u309f" for ch in k) and fold(k) in terms:
                keys.append(fold(k))
    out = {}
    for form, groups in sorted(forms.items()):
        reached = set().union(*(group_terms[g][1] for g in groups if g in group_terms))
        df, own = terms.get(form, (0, set()))
        extra = reached - own
        lines = lookup.group_lines(groups) if not df else 0
        if extra or lines:
            out[form] = [lines, sum(1 << games.index(g) for g in extra)]
    return {"groups": out, "kana_keys": sorted(set(keys))}


def nothing_fits_export(lookup, synonyms: list[tuple[list[str], list[str]]] = ()) -> dict:
    """What the browser's lookup needs to say nothing fits (static/offline-search.js `fits`): the server's
    messages, its threshold, and each term of the server's evidence with the number of the text's lines that
    hold it (the word's weight, as lookup.py weighs it) and the games whose evidence holds it (a bit each, in
    `games` order). The browser cannot rank the server's answers (sections, rules): it asks whether a game's
    evidence as a whole holds enough of the story, which a story the server finds fits always does."""
    n, terms = lookup.evidence_terms()
    terms = {**terms, **synonym_terms(synonyms, terms)}
    games = list(lookup.policies.games)
    return {
        **word_groups_export(lookup, synonyms, terms, games),
        "message": NONE_MESSAGE,
        "message_all": NONE_MESSAGE_ALL,
        "threshold": OFFLINE_NONE_THRESHOLD,
        "threshold_one": OFFLINE_NONE_THRESHOLD_ONE,
        "one_word": ONE_WORD,  # an answer holding one of the story's words alone, in the ranking
        "lines": n,
        "games": games,
        "terms": {t: [df, sum(1 << games.index(g) for g in gs)] for t, (df, gs) in sorted(terms.items())},
        # the games' names the server's lookup leaves out of a story's words (the ones no line spells)
        "names": sorted(n for n in lookup.game_names if n not in terms),
    }


@lru_cache(maxsize=4)
def _export_json(kind: str, version: str, synonyms_path: str) -> bytes:
    lib = current_library()
    synonyms = load_synonyms(synonyms_path) if synonyms_path and Path(synonyms_path).exists() else []
    docs = index_docs(lib.corpus) if kind == "search" else list(situation_docs(lib.policies))
    levels = {}  # a level's own line (`Lookup.level_lines`): that level, on its section's line
    if kind == "situations" and lib.lookup is not None:
        for a, level, line in lib.lookup.level_lines():
            key = f"{a.game}/level:{level.id}"
            levels[key] = (a.section, level, line)
            docs.append(
                IndexDoc(
                    id=key,
                    game=a.game,
                    doc="infractions",
                    anchor="",
                    title="",  # the line alone is its evidence (the title's ③ and 【敗北】 would outweigh it)
                    doc_title=a.policy.name,
                    text=line,
                )
            )
    data = build_index_export(docs, synonyms, search=kind == "search")
    # each game's names, read in a query's words as the server reads them (search/games.py)
    if kind == "search":
        names = lib.corpus.game_names()
        scope = scope_names(names, analyzer().words)  # a game's names its own search leaves out
        data["games"] = {
            g: {"names": game.names, "short": game.meta.short_name, "scope": scope[g]}
            for g, game in lib.corpus.games.items()
        }
        data["named_weight"] = WEIGHT["named_game"]
        # a name and only these: the game's text from its start (`SearchIndex._asks_more`); the kanji the stop
        # words are written with, for what no word of the corpus covers (教えて, 何)
        data["about_game"] = sorted(ABOUT_A_GAME)
        data["asking_tails"] = [fold(t) for t in ASKING_TAILS]
        data["about_chars"] = sorted(
            {ch for w in QUERY_STOP | ABOUT_A_GAME for ch in w if KANJI_RE.match(ch)}
        )
    if kind == "situations":  # what the server's lookup shows beside each answer: the badge, the description
        for d in data["docs"]:
            game, _, iid = d["id"].partition("/")
            policy = lib.policies.games[game]
            if d["id"] in levels:  # as the server's page shows it: the level, discretion, who may issue it
                sec, level, line = levels[d["id"]]
                d.update(title=sec.title, pen=level.label, meta=level_meta(level), snip=line, href=sec.url)
                if issuer := level_issuer(level):
                    d["warn"] = issuer
                continue
            if iid.startswith("rule:"):  # an accumulation rule: its badge, and the section it cites
                rule = next(r for r in policy.file.rules if f"rule:{r.id}" == iid)
                d["pen"] = f"{policy.rule_badge(rule)} {policy.rule_note(rule)}・累積・格上げの規定"
                d["snip"] = rule.citations[0].quote  # the text's own words, as the server shows its line
                d["href"] = f"/rules/{rule.citations[0].section}"
                if issuer := policy.rule_issuer(rule):  # who alone may issue a level it may reach (【敗北】)
                    d["warn"] = issuer
                continue
            inf = policy.infractions[iid]
            d["pen"] = policy.penalty_text(inf) + (" ジャッジの判断あり" if inf.discretion else "")
            d["snip"] = inf.description  # the snippet (the judges' words in `text` are for matching only)
        if lib.lookup is not None:
            data["none"] = nothing_fits_export(lib.lookup, synonyms)
            data["story"] = lib.lookup.story_export()  # the story as the server's lookup reads it
        # the story's words without meaning, as the server's lookup drops them (English grammar too: what, by)
        data["stop"] = sorted(LOOKUP_STOP | ENGLISH_STOP)
    data["version"] = version
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _json_file(kind: str) -> Response:
    body = _export_json(kind, offline_version(), current_app.config.get("SYNONYMS_PATH") or "")
    return Response(body, mimetype="application/json")


@bp.get("/offline/search.json")
def search_index():
    """The sections' compact index for searching in the browser."""
    return _json_file("search")


@bp.get("/offline/situations.json")
def situation_index():
    """The infractions' compact index for the situation lookup in the browser."""
    return _json_file("situations")


@bp.get("/offline/missing")
def missing():
    """What the worker shows for a page it did not keep."""
    return render_template("offline_missing.html")


@bp.get("/sw.js")
def service_worker():
    """The worker, with the offline version written in (a new version installs a new worker)."""
    body = (STATIC_DIR / "sw.js").read_text(encoding="utf-8")
    store = current_assets().url("queue-store.js")
    body = f'const VERSION = "{offline_version()}";\nimportScripts("{store}");\n' + body
    resp = Response(body, mimetype="text/javascript")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


@bp.get("/manifest.webmanifest")
def manifest():
    """The manifest that makes the app installable."""
    assets = current_assets()
    data = {
        "name": "judgeapp ジャッジの手元",
        "short_name": "judgeapp",
        "lang": "ja",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": "#0b57d0",
        "background_color": "#ffffff",
        "icons": [
            {"src": assets.url("icon-192.png"), "sizes": "192x192", "type": "image/png"},
            {
                "src": assets.url("icon-512.png"),
                "sizes": "512x512",
                "type": "image/png",
                "purpose": "any maskable",
            },
        ],
    }
    resp = current_app.json.response(data)
    resp.mimetype = "application/manifest+json"
    return resp
