"""From a judge's words to one query with every signal (words, readings, synonyms, spellings, numbers,
characters), built in code, never parsed."""

from __future__ import annotations

import bisect
import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from whoosh import query as Q

from ..textnorm import (
    deletions,
    edit_distance,
    fold,
    is_kana,
    kana_consonants,
    kana_romaji,
    kana_skeleton,
    latin_consonants,
    romaji_to_hiragana,
    section_number_keys,
    squash,
    squash_map,
    to_hiragana,
    to_katakana,
    unvoiced_start,
)
from .analysis import (
    CHUNK_BREAK,
    DEFINITION_QUESTION,
    HIRAGANA_RUN,
    KANA_COUNT_ASKED,
    KANA_COUNTERS,
    KANA_FIRST_LETTER,
    KANA_QUESTION_TAIL,
    KANA_QUESTION_TYPED,
    KANA_TAIL_HEADS,
    KANJI_RE,
    KANJI_WORD,
    KATAKANA_THEN_HIRAGANA,
    LATIN_WORD,
    LONE_PARTICLES,
    NUMBERING,
    PARTICLE_CHARS,
    QUERY_STOP,
    ROMAJI_TAIL,
    SAME_COUNTER,
    Word,
    analyzer,
    char_bigrams,
    clip_map,
    defined_term,
    inside_katakana_word,
    katakana_word,
    query_numbers,
    query_own_numbers,
    romaji_moras,
    sense_in_auxiliary,
    spelling_maps,
    spoken_counts,
    spoken_numbers,
    title_topic,
    weighted_query,
    without_question_tail,
    word_pairs,
    word_stem,
)
from .schema import FIELD_BOOST, WEIGHT

if TYPE_CHECKING:
    pass


@dataclass
class QueryWord:
    """One word of a judge's query, analysed once: what it is matched by."""

    word: Word
    kana: bool  # typed in kana (its reading is matched too)
    chunk: str = ""  # the run of kana it is, when the whole run is matched as one word
    # the texts' phrases for it when it is a judge's word of rules_corpus/synonyms.yaml (出禁: 出場停止)
    phrases: tuple[Q.Query, ...] = ()


# The verbs of the compound particles that say what a sentence is about (〜について, 〜に関して): SudachiPy
# reads に|つい|て, but the judge asks about the word before them, not for つく (〜によって, by, is kept:
# 版によって違う).
_ABOUT_VERBS = frozenset(fold(w) for w in ("付く", "つく", "関する"))


def _about(w: Word, chunk: str) -> bool:
    """Whether a word of the query is the verb of 〜について or 〜に関して, as typed."""
    return any(f in _ABOUT_VERBS for f in w.forms) and f"に{w.surface}て" in chunk


def _katakana_after(text: str, b: int) -> bool:
    """Whether text[b] and the character after it are both katakana: a word typed in katakana goes on there."""
    return all("\u30a1" <= c <= "\u30fa" or c == "ー" for c in text[b : b + 2]) and b + 1 < len(text)


# The words that mark a section number (第十章, 第3条b): part of the number, as its digits are.
_NUMBER_MARKS = frozenset("第章節条項")


def _number_part(w: Word) -> bool:
    """Whether a word is a part of a section number: its digits, letters, roman numerals or marks (第, 章)."""
    return any(NUMBERING.fullmatch(f) or f in _NUMBER_MARKS for f in w.forms)


# A reference in the text to a numbered section (第 11 章), in a sentence of its own (`_mention_query`).
_REFERENCE = re.compile(r"第\s*[0-9０-９〇一二三四五六七八九十百]+\s*[章節条項]")
_SENTENCE = re.compile(r"[^。\n]+")

# The counters a judge asks for after 何 (何分: SudachiPy reads it as one word, なにぶん, "somewhat").
_COUNTER_WORDS = frozenset(KANA_COUNTERS.values())


class QueryBuilding:
    """`SearchIndex`'s query side: a judge's text analysed once and made into one Whoosh query."""

    def _open_query(self, lex: dict, synonyms: list[tuple[list[str], list[str]]] | None) -> None:
        """What the query side keeps from the lexicon and the synonym list, made once when the index opens."""
        self.readings = set(lex["reading"])
        self._mentions: dict[str, list[str]] | None = None  # `_mention_query`, made on first use
        self.max_reading = max((len(r) for r in self.readings), default=1)
        self._sorted_readings = sorted(self.readings)
        lengths: dict[str, set[int]] = {}  # the lengths (2+) of the readings starting with each character
        for r in self.readings:
            if len(r) >= 2:
                lengths.setdefault(r[0], set()).add(len(r))
        self._reading_lengths = {ch: sorted(ls, reverse=True) for ch, ls in lengths.items()}
        self.synonyms = synonyms or []
        self.analyzer = analyzer()
        self._analysed: dict[str, list[Word]] = {}
        self._index_synonyms()
        self._index_spellings()
        # the readings of the corpus's katakana words (loan words), for a loan word typed in hiragana: the
        # words the text writes in katakana (`loan`; not しかし or ただし, whose folded surfaces are katakana too)
        self._loan_readings = frozenset(r for r in lex["loan"] if len(r) >= 2)
        # two katakana words side by side in the text (デッキ|チェック), by the skeleton of the two as one word
        # and its deletion neighbourhood: a compound of them typed with one mora wrong (デッキチャック)
        self._pair_skeletons: dict[str, list[str]] = {}
        self._pair_deletes: dict[str, list[str]] = {}
        for p in lex.get("terms", {}).get("pairs", ()):
            a, _, b = p.partition("|")
            if katakana_word(a, 2) and katakana_word(b, 2) and len(sk := kana_skeleton(a + b)) >= 5:
                self._pair_skeletons.setdefault(sk, []).append(p)
                for d in deletions(sk):
                    self._pair_deletes.setdefault(d, []).append(sk)
        # the same by their consonants as a Japanese reader says a Latin word (drop, ドロップ: TRB)
        self._loan_consonants: dict[str, list[str]] = {}
        for r in sorted(self._loan_readings):
            cons = kana_consonants(r)
            if len(cons) >= 3:
                self._loan_consonants.setdefault(cons, []).append(r)

    def _words(self, text: str) -> list[Word]:
        """The analysis of a short text, kept (synonym keys and phrases are analysed once)."""
        hit = self._analysed.get(text)
        if hit is None:
            hit = self._analysed[text] = self.analyzer.words(text)
        return hit

    def _index_synonyms(self) -> None:
        """The synonym list's keys, indexed: by their squashed spelling and by their first word's form."""
        self._synonym_by_key: dict[str, list[int]] = {}
        self._synonym_by_lemma: dict[str, list[tuple[list[str], int]]] = {}
        self._synonym_by_reading: dict[str, list[int]] = {}
        self._phrases: list[list[list[Word]]] = []
        self._phrase_built: dict[tuple[int, bool], list[Q.Query]] = {}  # (entry, one word): `_phrase_queries`
        self._entry_keys: list[set[str]] = []  # what one query word may be to be an entry's key
        clipped: list[tuple[str, int]] = []  # (a key clipped as judges clip it, its entry): `_clipped_key`
        for i, (keys, means) in enumerate(self.synonyms):
            self._phrases.append([self._words(m) for m in means])
            self._entry_keys.append(set())
            for k in keys:
                key = squash(k)
                if key:
                    self._synonym_by_key.setdefault(key, []).append(i)
                    self._entry_keys[i].add(key)
                lemmas = [w.forms[0] for w in self._words(k)]
                if sense_in_auxiliary(k):
                    lemmas = []  # (持ってった is no 持つ: recognised as typed only)
                if lemmas:
                    self._synonym_by_lemma.setdefault(lemmas[0], []).append((lemmas, i))
                if len(lemmas) == 1:
                    self._entry_keys[i].add(lemmas[0])
                clipped.extend((c, i) for c in self._clipped_key(k))
                # What each key sounds like, so that a query typed in kana (しっかく) finds the entry (失格).
                reading = "".join(w.reading for w in self._words(k))
                if len(reading) >= 3:
                    self._synonym_by_reading.setdefault(reading, []).append(i)
                    self._entry_keys[i].add(reading)
        words = self.lexicon["words"]
        for key, i in clipped:
            if key not in self._synonym_by_key and key not in self.readings and key not in words:
                self._synonym_by_key[key] = [i]
                self._entry_keys[i].add(key)
        # the katakana keys by their consonants, for an English word typed for one (drop: ドロップ)
        self._key_consonants: dict[str, list[str]] = {}
        for key in self._synonym_by_key:
            if katakana_word(key, 3) and len(cons := kana_consonants(key)) >= 3:
                self._key_consonants.setdefault(cons, []).append(key)
        self._max_key = max((len(k) for k in self._synonym_by_key), default=0)
        # the lengths of the keys beginning with each two characters, shortest first (the only slices to
        # try: a slice is cut only where a key can start), and the keys of one character
        by_two: dict[str, set[int]] = {}
        for key in self._synonym_by_key:
            if len(key) >= 2:
                by_two.setdefault(key[:2], set()).add(len(key))
        self._key_lengths_2 = {two: tuple(sorted(ls)) for two, ls in by_two.items()}
        self._one_char_keys = frozenset(k for k in self._synonym_by_key if len(k) == 1)
        self._reading_rank = {r: i for i, r in enumerate(self._synonym_by_reading)}
        reading_lengths: dict[str, set[int]] = {}
        for r in self._synonym_by_reading:
            reading_lengths.setdefault(r[0], set()).add(len(r))
        self._reading_key_lengths = {ch: sorted(ls) for ch, ls in reading_lengths.items()}

    def _clipped_key(self, key: str) -> list[str]:
        """A judge's word of two loan words as judges clip it, the first two or three characters of each
        (サイドチェンジ → サイチェン, ダブルスリーブ → ダブスリ, スロープレイ → スロプレ), as the corpus's own
        compounds are clipped (`clip_map`)."""
        ws = self._words(key)
        if len(ws) != 2:
            return []
        return list(clip_map([f"{fold(ws[0].surface)}|{fold(ws[1].surface)}"], ()))

    def _index_spellings(self) -> None:
        """What loose spellings may stand for (`spelling_maps`, kept in the lexicon at build time)."""
        maps = self.lexicon.get("spellings") or spelling_maps(self.readings, self.lexicon["words"])
        self._skeletons = maps["skeletons"]
        self._skeleton_deletes = maps["deletes"]
        self._max_skeleton = max((len(k) for k in self._skeletons), default=1)
        self._sorted_skeletons = sorted(self._skeletons)
        self._latin = maps["latin"]
        self._letters = maps["letters"]
        self._clips = maps.get("clips", {})
        self._kanji_readings = {ch: frozenset(rs) for ch, rs in maps.get("kanji_readings", {}).items()}
        self._kanji_masks = maps.get("kanji_masks", {})

    def analyse(self, text: str) -> list[QueryWord]:
        """The query's content words, analysed once (a run of kana is also kept whole)."""
        return self._analyse(self.as_meant(text))[0]

    def as_meant(self, text: str) -> str:
        """What a judge typed or said, as written: a section number said in kana written as one (さんびー →
        3b, `spoken_numbers`), a count said in kana as written (さんぷん → 3分, `spoken_counts`), and a romaji tail that the phone's kana input left unconverted completed to
        the corpus's reading it starts (ちこk → ちこく, `_romaji_tail`)."""
        text = self._romaji(text)
        text = spoken_counts(spoken_numbers(text), self._said_reading)
        if ROMAJI_TAIL.search(text):
            text = ROMAJI_TAIL.sub(lambda m: self._romaji_tail(m.group(1), m.group(2)), text)
        return text

    def _romaji(self, text: str) -> str:
        """A query typed in romaji (match to game no chigai wa nan desu ka, sideboard no card nakushita): when
        it holds a word of four letters or more that SudachiPy does not know and that is romaji through and
        through (chigai), and another romaji word or that word alone when it is the corpus's words as they sound
        (kansensha), every lower-case Latin word that is romaji and that SudachiPy reads as no loan word
        (no, to, wa, desu; not game, ゲーム to SudachiPy) is written in hiragana, as the judge meant it; the
        corpus's Latin words and the synonym list's keys stay as typed (ban)."""
        if not LATIN_WORD.search(text):
            return text
        found: list[tuple[int, int, str]] = []
        trigger = sure = False
        for m in LATIN_WORD.finditer(text):
            word = m.group()
            kana = romaji_to_hiragana(word) if word.islower() else None
            if kana is None or word in self.lexicon["words"] or squash(word) in self._synonym_by_key:
                continue
            # (not kept: a judge's words are unbounded; `_words` keeps the synonym list's, which are not)
            ws = self.analyzer.words(word)
            if len(ws) != 1 or not all(f.isascii() for f in ws[0].forms):
                continue  # a word SudachiPy reads as a loan word (game: ゲーム)
            found.append((m.start(), m.end(), kana))
            unknown = len(word) >= 4 and ws[0].reading.isascii()
            trigger = trigger or unknown
            # one such word is enough, five letters or more, when it is the corpus's words as they sound
            # (`_romaji_reading`: kansensha, 観戦者; chikoku, 遅刻)
            sure = sure or (unknown and len(word) >= 5 and self._romaji_reading(kana))
        if not sure and (not trigger or len(found) < 2):
            return text
        out, last = [], 0
        for a, b, kana in found:
            out.append(text[last:a] + kana)
            last = b
        return "".join(out) + text[last:]

    def _romaji_reading(self, kana: str) -> bool:
        """Whether a word typed in romaji, in hiragana, is the corpus's words as they sound: a reading of the
        corpus or of a synonym key as a whole, or readings of the corpus side by side, end to end (カンセン|シャ)."""
        k = fold(to_katakana(kana))
        if k in self.readings or k in self._synonym_by_reading:
            return True
        return sum(map(len, self._segment_reading(k))) == len(k)

    def _said_reading(self, k: str) -> bool:
        """Whether kana said for a count are rather a word: a reading of the corpus (ジュウブン: 十分, サンショウ:
        参照), or one word to SudachiPy that is no numeral (にほん: 日本, ごかい: 誤解)."""
        if fold(k) in self.readings:
            return True
        kana = to_hiragana(k)
        pos = self.analyzer.parts_of_speech(kana)
        return len(pos) == 1 and pos[0][:2] == (0, len(kana)) and pos[0][3] != "数詞"

    def _romaji_tail(self, kana: str, letters: str) -> str:
        """A run of kana that ends in the consonant of a mora not typed yet (ちこk, でっきちぇっk, かーf): the
        kana and the mora of that consonant whose end is the longest reading of the corpus (チコク; チェック
        in デッキチェック), else the one reading that is the kana and one more mora (まりがs: マリガン; かーf:
        カード), else the kana alone."""
        k = fold(to_katakana(kana))
        # the mora that makes the run, or its end (でっきちぇっk: チェック), a reading of the corpus: the longest
        best = 0
        found = []
        for m in romaji_moras(letters):
            w = k + m
            n = next((n for n in range(len(w), len(m) + 1, -1) if w[-n:] in self.readings), 0)
            if n > best:
                best, found = n, [w]
        if not found:
            i = bisect.bisect_left(self._sorted_readings, k)
            more = []
            while i < len(self._sorted_readings) and self._sorted_readings[i].startswith(k):
                r = self._sorted_readings[i]
                tail = r[len(k) :]
                if len(tail) == 1 or (len(tail) == 2 and tail[1] in "ャュョァィゥェォ"):
                    more.append(r)
                i += 1
            found = more if len(more) == 1 else []
        return to_hiragana(found[0]) if found else kana

    def _analyse(self, text: str) -> tuple[list[QueryWord], list[Word] | None, str]:
        """`analyse`, SudachiPy's words of the whole text when the text is one chunk (None otherwise), so
        that the word pairs need not cut it again, and the parts of the text that hold the query's words
        (without the question and courtesy parts: their character pairs are no part of an answer)."""
        out: list[QueryWord] = []
        content: list[str] = []
        chunks = []
        for c in CHUNK_BREAK.split(text):
            # SudachiPy may read a run of kana wrongly (しーるど|って, ありすそふ|と|は): the question it ends
            # with, as typed, is cut from it first
            m = KANA_QUESTION_TAIL[0].match(c) or KANA_QUESTION_TAIL[1].match(c)
            for part in m.groups() if m else [c] if c else []:
                # a katakana word with hiragana after it (スコアキーパいないと): two parts, so that the
                # katakana word is matched, spelling and all, as a word of its own
                k = KATAKANA_THEN_HIRAGANA.match(part)
                for piece in k.groups() if k else [part]:
                    chunks.extend(x for y in self._loan_words_apart(piece) for x in self._readings_apart(y))
        whole_text = None
        for chunk in chunks:
            if chunk in LONE_PARTICLES:
                continue  # a particle typed as a word of its own (あいて に わるいことば)
            counted = KANA_COUNT_ASKED.fullmatch(to_katakana(chunk)) if is_kana(chunk) else None
            if counted:  # なんてん, なんにん: 何点, 何人 typed in kana, the counter asked for (it ranks only)
                counter = KANA_COUNTERS[counted.group(1)]
                out.extend(
                    QueryWord(dataclasses.replace(x, suffix=True, asked=True), kana=False)
                    for x in self.analyzer.words(counter)
                )
                content.append(counter)
                continue
            analysed = self.analyzer.words(chunk)
            if len(chunks) == 1 and chunk == text:
                whole_text = analysed  # the text as typed, question and all (its word pairs)
            if is_kana(chunk):
                cut = without_question_tail(chunk, analysed)
                if cut != chunk:
                    chunk, analysed = cut, self.analyzer.words(cut)
            words = [
                x
                for w in analysed
                if w.forms[0] not in QUERY_STOP
                and fold(w.surface) not in KANA_QUESTION_TYPED
                and not w.filler
                and not _about(w, chunk)
                # a grammatical verb in a content word's place (〜てしまう, 〜ておく, 〜ないといけない), outside a
                # run of kana (a run of kana is read whole: でんどう)
                and not (w.aux and not is_kana(chunk))
                for x in self._without_question_word(w)
            ]
            if is_kana(chunk) and not words and (analysed or self._only_particles(chunk)):
                continue  # only light, question or courtesy words (すみません, なに), or particles (とは)
            if words or is_kana(chunk):
                content.append(chunk)
            if is_kana(chunk):
                k = fold(to_katakana(chunk))
                whole = Word(surface=chunk, forms=(k,), reading=k, parts=tuple(w.forms[0] for w in words))
                whole.synonyms = tuple(g for w in words for g in w.synonyms) if len(words) == 1 else ()
                out.append(QueryWord(whole, kana=True, chunk=chunk))
            else:
                out.extend(self._reading_typos(chunk, words))
        return out[:24], whole_text, " ".join(content)

    def _reading_typos(self, chunk: str, words: list[Word]) -> list[QueryWord]:
        """The query words of a chunk, where two or three neighbouring words of kanji, side by side as typed,
        that make no word of the corpus and are not all its words (SudachiPy cuts a typo into what it
        knows: 観|選者, 権|理) are the corpus's word of two to four kanji with one kanji wrong, of the same
        reading, as a phone's kana-to-kanji conversion picks it (観戦者, 権利): the pieces are then one word of
        the query, with that word among its alternatives (`_same_reading`), at the spelling weight. A single
        dictionary word is left as it is (一節 is not 一切: the judge may mean the word typed)."""
        out: list[QueryWord] = []
        known = self.lexicon["words"]
        i = 0
        while i < len(words):
            for n in (3, 2):
                window = words[i : i + n]
                if len(window) < n:
                    continue
                s = "".join(w.surface for w in window)
                if not KANJI_WORD.fullmatch(s) or s in known or s not in chunk:
                    continue
                if all(any(f in known for f in w.forms) for w in window):
                    continue  # correct words side by side (出場 停止)
                alts = self._same_reading(s)
                if not alts:
                    continue
                merged = Word(
                    surface=s,
                    forms=(s,),
                    reading="".join(w.reading for w in window),
                    parts=tuple(w.forms[0] for w in window),
                )
                out.append(QueryWord(merged, kana=False, phrases=tuple(alts)))
                i += n
                break
            else:
                out.append(QueryWord(words[i], kana=is_kana(words[i].surface)))
                i += 1
        return out

    def _same_reading(self, s: str) -> list[Q.Query]:
        """The corpus's words (or two neighbouring words that make one) that a kanji spelling the corpus lacks
        may stand for: the same length, one kanji other, and that kanji and the typed one read alike in the
        corpus's words (`kanji_readings`; exactly: 同 ドウ is not 統 トウ). At most three;
        each weighs as one word at the spelling weight, in the text or the title."""
        found: list[str] = []
        readings = self._kanji_readings
        typed = [readings.get(ch, frozenset()) for ch in s]
        for i in range(len(s)):
            if not typed[i]:
                continue
            for term in self._kanji_masks.get(s[:i] + "?" + s[i + 1 :], ()):
                word = term.partition(":")[2].replace("|", "")
                if typed[i] & readings.get(word[i], frozenset()) and term not in found:
                    found.append(term)
        if not 0 < len(found) <= 3:
            return []
        out: list[Q.Query] = []
        for term in found:
            field, _, text = term.partition(":")
            both = [
                Q.Or([Q.Term("words", x), Q.Term("title", x, boost=FIELD_BOOST["title"])])
                for x in text.split("|")
            ]
            out.append(weighted_query(Q.And(both) if len(both) > 1 else both[0], WEIGHT["fuzzy"] / len(both)))
        return out

    def _loan_words_apart(self, chunk: str) -> list[str]:
        """A loan word typed in hiragana beside other characters (どらふと中に): its run of hiragana starts
        with the reading of a katakana word of the corpus (three characters or more, the longest), which
        SudachiPy would cut into unrelated words (どら|ふと); that word is a part of its own."""
        if is_kana(chunk):
            return [chunk]
        for m in HIRAGANA_RUN.finditer(chunk):
            run = m.group()
            spoken = to_katakana(run)  # (a hiragana run's katakana is folded already)
            # at the run's start, or after a particle that begins it (大会のるーる)
            for start in (0, 1) if run[0] in PARTICLE_CHARS else (0,):
                for end in range(min(len(run), start + self.max_reading), start + 2, -1):
                    if spoken[start:end] in self._loan_readings:
                        a, b = m.start() + start, m.start() + end
                        return [x for x in (chunk[:a], chunk[a:b]) if x] + self._loan_words_apart(chunk[b:])
        return [chunk] if chunk else []

    def _readings_apart(self, chunk: str) -> list[str]:
        """A word typed in hiragana that SudachiPy misreads (相手がこうちく: こう|ちく; けいこくした): a run of
        hiragana that starts (or starts after one particle; after a kanji only after one, else it is
        okurigana) with the reading of one of the corpus's words, three characters or more, the longest, is a
        part of its own (then matched by reading, as a run of kana is), unless SudachiPy reads the corpus's
        word there, a word across its edge (のぞき見), or only light words and particles there (している is not
        指定 + る). A run of kana on its own is cut so only before grammar (けいこく|した), not before a word."""
        for m in HIRAGANA_RUN.finditer(chunk):
            run, at = m.group(), m.start()
            after_kanji = at > 0 and bool(KANJI_RE.match(chunk[at - 1]))
            starts = (1,) if after_kanji else (0, 1)
            spoken = to_katakana(run)
            for start in starts:
                if start and run[0] not in PARTICLE_CHARS:
                    continue
                end = next(
                    (
                        e
                        for e in range(min(len(run), start + self.max_reading), start + 2, -1)
                        if spoken[start:e] in self.readings
                    ),
                    0,
                )
                if not end:
                    continue
                a, b = at + start, at + end
                if a == 0 and b == len(chunk):
                    return [chunk]
                if not self._misread(chunk, a, b):
                    break
                if is_kana(chunk) and (a > 0 or not self._grammar(chunk[b:])):
                    break  # a run of kana is cut only before grammar (けいこく|した), not before a word
                return [x for x in (chunk[:a], chunk[a:b]) if x] + self._readings_apart(chunk[b:])
        return [chunk] if chunk else []

    def _grammar(self, kana: str) -> bool:
        """Whether SudachiPy reads a short run of kana as particles, auxiliaries and light words only (した,
        について), and it holds no long-vowel mark (かーど is a word SudachiPy does not read)."""
        return "ー" not in kana and all(
            not is_content or form in QUERY_STOP for _, _, form, is_content in self.analyzer.morphemes(kana)
        )

    def _misread(self, chunk: str, a: int, b: int) -> bool:
        """Whether SudachiPy reads chunk[a:b] (a corpus reading typed in hiragana) as no word of the corpus
        and not as grammar only: some content word of its overlaps it, none of them is the corpus's."""
        content = False
        words = self.lexicon["words"]
        for begin, end, form, is_content in self.analyzer.morphemes(chunk):
            if end <= a or begin >= b or not is_content or form in QUERY_STOP:
                continue
            if begin < a or end > b:
                return False  # a word across the run's edge (のぞき見): SudachiPy reads the run otherwise
            if a <= begin and end <= b and end - begin >= 2 and form in words:
                return False
            content = True
        return content

    def _only_particles(self, chunk: str) -> bool:
        """A short run of hiragana that SudachiPy reads as particles only and that is no reading of the
        corpus (とは, には, のは after a word): it adds nothing to the query."""
        return (
            len(chunk) <= 3
            and all("\u3041" <= ch <= "\u309f" for ch in chunk)
            and fold(to_katakana(chunk)) not in self.readings
        )

    def _without_question_word(self, w: Word) -> list[Word]:
        """A word that starts with a question word (何枚, 何年, 何点): the rest of it (枚, 年, 点), which the text
        has where it gives the answer (５枚, 3 年)."""
        head = ""
        if len(w.parts) > 1 and w.parts[0] in QUERY_STOP and fold(w.surface).startswith(w.parts[0]):
            head = w.parts[0]
        elif not w.parts and w.surface[:1] == "何" and w.surface[1:] in _COUNTER_WORDS:
            head = "何"  # one word to SudachiPy (何分: なにぶん), a count asked all the same
        if head:
            rest = [x for x in self.analyzer.words(w.surface[len(head) :]) if x.forms[0] not in QUERY_STOP]
            # a counter asked for: it ranks, it is not required (a copy: the analyzer's words are shared)
            return [dataclasses.replace(x, suffix=True, asked=True) for x in rest]
        return [w]

    def _spellings(self, k: str) -> list[str]:
        """Corpus readings a katakana spelling may stand for when the corpus does not have it as written."""
        if k in self.readings or len(k) < 3:
            return []
        sk = kana_skeleton(k)
        found = list(self._skeletons.get(sk, ()))
        if len(sk) >= 4:
            for cand in [sk, *deletions(sk)]:
                for near in self._skeleton_deletes.get(cand, ()):
                    found.extend(self._skeletons[near])
                if cand != sk:
                    found.extend(self._skeletons.get(cand, ()))
        if not found and is_kana(k):
            found = self._truncated(k)
        return list(dict.fromkeys(found))[:8]

    def _truncated(self, k: str) -> list[str]:
        """Corpus readings a katakana word is the clipped start of, as judges clip loan words (レギュ for
        レギュレーション): at least three characters typed and two left off, and only when few words fit."""
        if len(k) < 3 or not all("\u30a1" <= ch <= "\u30fa" or ch == "ー" for ch in k):
            return []
        i = bisect.bisect_left(self._sorted_readings, k)
        out: list[str] = []
        while i < len(self._sorted_readings) and self._sorted_readings[i].startswith(k):
            if len(self._sorted_readings[i]) >= len(k) + 2:
                out.append(self._sorted_readings[i])
            i += 1
        sk = kana_skeleton(k)
        if not out and len(sk) >= 3:  # clipped and loosely spelt (トナメ: トーナメント, the ー dropped)
            i = bisect.bisect_left(self._sorted_skeletons, sk)
            while i < len(self._sorted_skeletons) and self._sorted_skeletons[i].startswith(sk):
                if len(self._sorted_skeletons[i]) >= len(sk) + 2:
                    out.extend(self._skeletons[self._sorted_skeletons[i]])
                i += 1
        return out if len(out) <= 3 else []

    def _misspelt_pair(self, k: str) -> list[str]:
        """The text's two katakana words side by side (`pairs`) that a katakana word the corpus lacks is,
        typed as one word with one mora wrong, missing or extra by its skeleton (デッキチャック: デッキ|チェック;
        five skeleton characters or more); at most three, else none."""
        if not katakana_word(k, 4):
            return []
        sk = kana_skeleton(k)
        if len(sk) < 5:
            return []
        near = set()
        for cand in [sk, *deletions(sk)]:
            near.update(self._pair_deletes.get(cand, ()))
            if cand in self._pair_skeletons:
                near.add(cand)
        found = [
            p
            for n in sorted(near)
            for p in self._pair_skeletons[n]
            # the first word typed right, the second with its consonants (a vowel or a mora's length wrong:
            # チャック for チェック; not コール for ルール)
            if k.startswith(a := p.partition("|")[0])
            and kana_consonants(k[len(a) :]) == kana_consonants(p[len(a) + 1 :])
        ]
        return found if len(found) <= 3 else []

    def _compound_head(self, k: str, first: bool = False) -> str:
        """The corpus's loan word that ends a katakana compound the corpus does not have (イカサマダイス →
        ダイス): a Japanese compound names a kind of its last word. The longest such reading, two characters
        or more, with two or more before it; "" when none. `first`: the loan word that begins it, with two
        characters or more after it (ライフメモ → ライフ: what the kind is of; a misspelt compound,
        シングルエリミネーシヨン, keeps its first word right)."""
        if len(k) < 4 or not all("\u30a1" <= ch <= "\u30fa" or ch == "ー" for ch in k):
            return ""
        cuts = range(len(k) - 2, 1, -1) if first else range(2, len(k) - 1)
        for cut in cuts:
            word = k[:cut] if first else k[cut:]
            if k[cut] != "ー" and word in self._loan_readings:
                # a word most sections have (カード) says nothing of which one is meant
                common = len(self._evaluator.postings("reading", word)[0]) > 0.1 * self._evaluator.n
                return "" if common else word
        return ""

    def _latin_loans(self, word: str) -> list[str]:
        """The corpus's loan words a Latin word typed for one may be (four letters or more, lower case): the
        same consonants as a Japanese reader says them (`latin_consonants`, `kana_consonants`: mulligan and
        マリガン MRKN), three or more, and the same first letter (not turns and チャレンジ); failing that, an
        English plural's s left off (sleeves: スリーブ). At most three, else none."""
        return _by_consonants(word, self._loan_consonants)

    def _latin_keys(self, qw: QueryWord) -> list[str]:
        """The synonym list's katakana keys an English word may be typed for, as `_latin_loans` finds the
        corpus's loan words (drop: ドロップ)."""
        return _by_consonants(qw.word.surface, self._key_consonants) if self._unknown(qw) else []

    def _latin_pair_keys(self, qws: list[QueryWord]) -> list[int]:
        """The entries whose katakana key two English words typed side by side stand for, by consonants as a
        Japanese reader says them (`kana_consonants`; five or more, the same first kana): their katakana forms
        joined, an English plural's s left off a word SudachiPy then reads (extra turns: エキストラ + ターン for
        エクストラターン), or their letters joined when a word has no katakana form (single elim: シングルエリミ)."""
        out: list[int] = []
        if sum(1 for qw in qws if qw.word.surface.isascii()) < 2:
            return out
        for a, b in zip(qws, qws[1:], strict=False):
            x, y = a.word.surface, b.word.surface
            if not all(len(t) >= 3 and t.isascii() and t.isalpha() and t.islower() for t in (x, y)):
                continue
            kana = [self._loan_form(t) for t in (x, y)]
            if all(kana):
                joined = "".join(kana)
                cons = kana_consonants(joined)
                keys = (
                    [k for k in self._key_consonants.get(cons, ()) if len(cons) >= 5 and k[0] == joined[0]]
                    if joined not in self._synonym_by_key
                    else [joined]
                )
            else:
                keys = (
                    _by_consonants(x + y, self._key_consonants) if len(latin_consonants(x + y)) >= 5 else []
                )
            for k in keys[:3]:
                out += self._synonym_by_key[k]
        return out

    def _loan_form(self, word: str) -> str:
        """The katakana form SudachiPy gives an English word, or the word without its plural s ("" if none)."""
        for t in (word, word[:-1] if word.endswith("s") else ""):
            ws = self.analyzer.words(t) if t else []  # (not kept: a judge's words are not `_words`)
            if len(ws) == 1 and katakana_word(ws[0].forms[0], 2):
                return ws[0].forms[0]
        return ""

    def _latin_names(self, k: str) -> list[str]:
        """Latin words of the corpus that a word typed in kana may be (リセ → lycee, ティーシージー → tcg)."""
        out = list(self._letters.get(squash(k), ()))
        cons = kana_consonants(k)
        if len(cons) >= 2:
            out += self._latin.get(cons, ())
        return out

    def _word_query(
        self,
        qw: QueryWord,
        mode: str = "and",
        alternatives: tuple[list[Q.Query], list[Q.Query]] | None = None,
    ) -> Q.Query:
        """What one word of the query is matched by: its alternatives (`_word_alternatives`, or those given,
        made once for both modes) and its short units, all of them (`and`) or any (`or`)."""
        head, tail = alternatives if alternatives is not None else self._word_alternatives(qw)
        parts = [Q.Term("words", p) for p in qw.word.parts]
        if not parts:
            return Q.Or([*head, *tail])
        return Q.Or([*head, Q.And(parts) if mode == "and" else Q.Or(parts, boost=0.5), *tail])

    def _word_alternatives(self, qw: QueryWord) -> tuple[list[Q.Query], list[Q.Query]]:
        """A word's alternatives other than its short units: those that come before them, those after (the
        same for `_word_query`'s two modes)."""
        w = qw.word
        alts: list[Q.Query] = []
        for f in (*w.forms, *SAME_COUNTER.get(w.forms[0], ())):  # (2回: ２度 too)
            alts.append(Q.Term("words", f, boost=FIELD_BOOST["words"]))
            alts.append(Q.Term("title", f, boost=FIELD_BOOST["title"]))
        if qw.kana:
            alts.append(Q.Term("reading", w.reading, boost=FIELD_BOOST["reading"]))
            if self._has("part_reading", w.reading):  # a short unit of a word that splits (ていし: 停止中)
                alts.append(Q.Term("part_reading", w.reading, boost=FIELD_BOOST["reading"]))
        if qw.chunk and not qw.phrases:  # (a judge's word read whole is not cut: かけごと is not かけ + ごと)
            pieces = self._segment_reading(w.reading)
            if len(pieces) > 1:
                alts.append(Q.And([self._reading_piece(p, WEIGHT["segments"]) for p in pieces]))
            elif not pieces and w.reading not in self.readings:
                # the run cut into the corpus's words by their skeletons (シングルエリミネーッション)
                near = self._segment_skeleton(w.reading)
                if len(near) > 1:
                    alts.append(
                        Q.And(
                            [Q.Or([Q.Term("reading", r) for r in rs]) for rs in near], boost=WEIGHT["fuzzy"]
                        )
                    )
        head, alts = alts, []
        # a word the texts do not have (バレる) can only be meant by its group's words (発覚): they weigh more
        sw = WEIGHT["synonym_only"] if w.synonyms and self._unknown(qw) else WEIGHT["synonym"]
        for g in w.synonyms:
            alts.append(Q.Term("syn", str(g), boost=sw))
        alts.extend(qw.phrases)
        if (
            (qw.kana or is_kana(w.surface))
            and w.reading not in self.readings
            and w.forms[0] not in self.lexicon["words"]
        ):
            spellings = self._spellings(w.reading)
            for r in spellings:
                alts.append(Q.Term("reading", r, boost=WEIGHT["fuzzy"]))
                for surface in self.lexicon["reading"].get(r, ())[:3]:
                    alts.append(Q.Term("title", surface, boost=WEIGHT["fuzzy"] * FIELD_BOOST["title"]))
            for name in self._latin_names(w.reading):
                alts.append(Q.Term("words", name, boost=WEIGHT["fuzzy"]))
            last = "" if qw.phrases else self._compound_head(w.reading)
            if last:  # a compound the corpus lacks, by its last word (イカサマダイス: a ダイス)
                alts.append(Q.Term("reading", last, boost=WEIGHT["fuzzy"]))
                for surface in self.lexicon["reading"].get(last, ())[:3]:
                    alts.append(Q.Term("title", surface, boost=WEIGHT["fuzzy"] * FIELD_BOOST["title"]))
            # and by its first, unless it is the corpus's words side by side (ヘッドジャッジ: ヘッド|ジャッジ)
            segments = self._segment_reading(w.reading)
            whole = qw.phrases or len(segments) > 1
            first = "" if whole else self._compound_head(w.reading, first=True)
            if first:  # (ライフメモ: ライフ; パイルシャッフノ, misspelt: パイル)
                alts.append(Q.Term("reading", first, boost=WEIGHT["fuzzy"]))
                for surface in self.lexicon["reading"].get(first, ())[:3]:
                    alts.append(Q.Term("title", surface, boost=WEIGHT["fuzzy"] * FIELD_BOOST["title"]))
            clipped = self._clips.get(w.reading, ())
            if not (clipped or spellings or segments):
                clipped = ["pairs:" + p for p in self._misspelt_pair(w.reading)]
            if 0 < len(clipped) <= 3:  # a clipped compound (ダブエリ: ダブル|エリミネーション)
                for term in clipped:
                    field, _, text = term.partition(":")
                    # both words (in the text or the title), weighing as one word together
                    both = [
                        Q.Or([Q.Term("words", x), Q.Term("title", x, boost=FIELD_BOOST["title"])])
                        for x in text.split("|")
                    ]
                    alts.append(weighted_query(Q.And(both), WEIGHT["fuzzy"] / len(both)))
        if w.surface.isascii() and self._unknown(qw):
            # an English word typed for a loan word of the corpus (sleeves: スリーブ), by its consonants
            for r in self._latin_loans(w.surface):
                alts.append(Q.Term("reading", r, boost=WEIGHT["fuzzy"]))
                for surface in self.lexicon["reading"].get(r, ())[:3]:
                    alts.append(Q.Term("title", surface, boost=WEIGHT["fuzzy"] * FIELD_BOOST["title"]))
        stem = word_stem(w)
        if stem and w.forms[0] not in self.lexicon["words"] and self._has("kanji", stem):
            # a word of the text's family, written or inflected otherwise (繰り下がる: 繰り下げ)
            alts.append(Q.Term("kanji", stem, boost=WEIGHT["fuzzy"]))
        if self._unknown(qw):
            # A word the corpus does not have (a card's nickname: ボルバル for ボルバルザーク) by its characters,
            # weighing as one word whatever its length.
            grams = list(dict.fromkeys(char_bigrams(w.surface)))
            if len(grams) >= 2 and all(self._has("grams", g) for g in grams):
                boost = WEIGHT["characters"] / len(grams)
                alts.append(Q.And([Q.Term("grams", g, boost=boost) for g in grams]))
        return head, alts

    def _defined_terms(self, words: list[QueryWord]) -> list[str]:
        """The phrases of the query (one to three neighbouring words) that some section defines."""
        out = []
        for i in range(len(words)):
            for n in (1, 2, 3):
                if i + n <= len(words):
                    run = words[i : i + n]
                    term = defined_term([qw.word for qw in run])
                    if term and self._has("defines", term):
                        out.append(term)
                    elif all(qw.kana for qw in run):  # typed in kana: by its reading
                        spoken = "".join(qw.word.reading for qw in run)
                        if len(spoken) >= 2 and self._has("defines", spoken):
                            out.append(spoken)
        return out

    def _reading_piece(self, piece: str, boost: float) -> Q.Query:
        """A piece of a run of kana: a word's reading, or a short unit's of a word that splits (テイシ: 停止中)."""
        term = Q.Term("reading", piece, boost=boost)
        if not self._has("part_reading", piece):
            return term
        return Q.Or([term, Q.Term("part_reading", piece, boost=boost)])

    def _without_number_parts(
        self, words: list[QueryWord], heads: list[str], keys: list[str]
    ) -> list[QueryWord]:
        """The query's words without the digits, letters and roman numerals of a section number it holds
        (Ⅲ-b 期間: Ⅲ and b are the number 3b, not words a section's text should hold: 6b-iii's 3 ゲームマッチ
        would outrank 3b), when some section has that number and other words remain, or when the number is said
        to be one (第12章 ペナルティ: 第 and 章 would find every sentence naming another chapter) and none has it."""
        if not heads:
            return words
        if not any(self._has("number", k) for k in keys) and not any(
            c in _NUMBER_MARKS for h in heads for c in h
        ):
            return words
        held = [squash(h) for h in heads]
        kept = [
            qw
            for qw in words
            if not (_number_part(qw.word) and any(squash(qw.word.surface) in h for h in held))
        ]
        return kept or words

    def _mention_query(self, keys: list[str]) -> Q.Query | None:
        """What the text says of a section number its game has no section of, in the sentences that refer to
        it (※ペナルティについては、第 11 章に詳しく書かれています: ijinden has no 第 11 章): their words, each found
        weighing `mentions` (第11章 finds the sentences, then the sections of what they say it is about)."""
        if self._mentions is None:
            self._mentions = {}
            stored = self._evaluator.stored
            for f in stored:
                for sentence in _SENTENCE.findall(f["text"] or ""):
                    for ref in _REFERENCE.findall(sentence):
                        for k in section_number_keys(ref):
                            held = self._evaluator.postings("number", k)[0]
                            if not any(stored[d]["game"] == f["game"] for d in held):
                                self._mentions.setdefault(k, []).append(sentence)
        said = list(dict.fromkeys(s for k in keys for s in self._mentions.get(k, [])))
        if not said:
            return None
        terms = []
        for sentence in said:
            for qw in self._analyse(sentence)[0]:
                w = qw.word
                if w.minor or w.suffix or _number_part(w):
                    continue
                terms += [
                    Q.Term("words", w.forms[0]),
                    Q.Term("title", w.forms[0], boost=FIELD_BOOST["title"]),
                ]
        if not terms:
            return None
        return Q.Or(list(dict.fromkeys(terms)), boost=WEIGHT["mentions"])

    def _has(self, field: str, text: str) -> bool:
        """Whether the index has the term (a query part that can match nothing is left out)."""
        return len(self._evaluator.postings(field, text)[0]) > 0

    def _unknown(self, qw: QueryWord) -> bool:
        """Whether the corpus has the word in none of its forms (nor, typed in kana, as a reading)."""
        w = qw.word
        words = self.lexicon["words"]
        return (
            not any(f in words for f in w.forms)
            and not any(p in words for p in w.parts)
            and w.reading not in self.readings
        )

    def _title_query(self, qw: QueryWord) -> Q.Query:
        """The word in the section's title (any of its forms, or its reading when typed in kana)."""
        w = qw.word
        alts: list[Q.Query] = [Q.Term("title", f) for f in w.forms]
        if w.parts:
            alts.append(Q.And([Q.Term("title", p) for p in w.parts]))
        grams = char_bigrams(w.surface)
        if len(grams) > 1 or len(w.surface) == 2:  # the title cut otherwise (不戦勝 as 不 + 戦勝)
            alts.append(Q.And([Q.Term("title_grams", g) for g in dict.fromkeys(grams)]))
        if qw.kana:  # the words it is the reading of, as words or as characters (the title cut otherwise)
            for surface in self.lexicon["reading"].get(w.reading, ())[:3]:
                alts.append(Q.Term("title", surface))
                if len(surface) >= 2:
                    alts.append(
                        Q.And([Q.Term("title_grams", g) for g in dict.fromkeys(char_bigrams(surface))])
                    )
        if qw.chunk and w.reading not in self.readings:  # a run of kana read as several words (すぺあかーど)
            pieces = self._segment_reading(w.reading)
            if len(pieces) > 1:
                alts.append(
                    Q.And(
                        [
                            Q.Or([Q.Term("title", x) for x in self.lexicon["reading"].get(p, ())[:3]])
                            for p in pieces
                        ]
                    )
                )
        return Q.Or(alts)

    def _segment_reading(self, k: str) -> list[str]:
        """Greedy longest match of a katakana string against the corpus's word readings (2+ chars): at each
        place only the lengths that readings starting with its character have are tried, longest first; a
        piece after the first, of three kana or more, may begin voiced where its word does not (rendaku:
        ムコウ|ジアイ is 無効|試合)."""
        pieces, i, covered = [], 0, 0
        lengths, readings = self._reading_lengths, self.readings
        while i < len(k):
            plain = unvoiced_start(k[i]) if i else k[i]
            tried = lengths.get(k[i], ())
            if plain != k[i]:
                tried = sorted({*tried, *lengths.get(plain, ())}, reverse=True)
            for n in tried:
                j = i + n
                if j > len(k):
                    continue
                # (a voiced start read away in three kana or more: two, フド as フト, is more often a typo)
                piece = k[i:j] if k[i:j] in readings or n < 3 else plain + k[i + 1 : j]
                if piece in readings:
                    pieces.append(piece)
                    covered += n
                    i = j
                    break
            else:
                i += 1
        return pieces if covered >= 0.7 * len(k) else []

    def _segment_skeleton(self, k: str) -> list[list[str]]:
        """A katakana run that no reading segments, cut by skeletons (`textnorm.kana_skeleton`: a mora dropped
        or doubled, a voiced mark lost) into the corpus's words: the readings each piece may be."""
        sk = kana_skeleton(k)
        pieces: list[list[str]] = []
        i = covered = 0
        while i < len(sk):
            for j in range(min(len(sk), i + self._max_skeleton), i + 1, -1):
                found = self._skeletons.get(sk[i:j])
                if found:
                    pieces.append(found[:4])
                    covered += j - i
                    i = j
                    break
            else:
                i += 1
        return pieces if covered >= 0.8 * len(sk) else []

    def words_query(self, text: str, mode: str = "and", boost: float = 1.0) -> Q.Query | None:
        """The words of a text, all of them (`and`) or any (`or`)."""
        parts = [self._word_query(qw, mode) for qw in self.analyse(text)]
        if not parts:
            return None
        return Q.And(parts, boost=boost) if mode == "and" else Q.Or(parts, boost=boost)

    def synonym_entries(self, text: str, words: list[QueryWord] | None = None) -> list[int]:
        """The synonym list's entries whose judge's word is in the query: as typed (ignoring width, kana,
        dots), by dictionary form (投げた finds 投げる), or by reading when the query is kana."""
        s, where = squash_map(text)
        found: list[int] = []
        particles: set[int] | None = None  # where SudachiPy reads a particle (looked up once, when needed)
        starts: tuple[set[int], set[int]] = (set(), set())  # where SudachiPy begins and ends a word
        by_two, one_char = self._key_lengths_2, self._one_char_keys
        for i, ch in enumerate(s):
            # (the lengths of the keys starting with s[i], shortest first, less those whose second character
            # is not s[i + 1]: they cannot match there)
            lengths = by_two.get(s[i : i + 2], ())
            if ch in one_char:
                lengths = (1, *lengths)
            for length in lengths:
                j = i + length
                if j > len(s):
                    break
                for e in self._synonym_by_key.get(s[i:j], ()):
                    key = s[i:j]
                    if key.isascii() and (
                        s[i - 1 : i].isascii()
                        and s[i - 1 : i].isalnum()
                        or s[j : j + 1].isascii()
                        and s[j : j + 1].isalnum()
                    ):
                        continue  # an ASCII key inside a longer ASCII word (ID in slide)
                    if inside_katakana_word(text, where[i], where[j - 1]):
                        continue  # a katakana key inside a longer katakana word (ペナ in ペナルティ)
                    if (
                        len(key) == 1
                        and KANJI_RE.match(key)
                        and any(
                            KANJI_RE.match(c) for c in text[max(where[i] - 1, 0) : where[i] + 2] if c != key
                        )
                    ):
                        continue  # a key of one kanji inside a longer word (卓 in 電卓)
                    if all("\u3041" <= c <= "\u309f" for c in text[where[i] : where[j - 1] + 1]):
                        if particles is None:
                            particles, starts = self._key_starts(text)
                        if where[i] in particles:
                            continue  # a key typed in hiragana that begins with a particle (ばい in すればいい)
                        if where[i] not in starts[0] or where[j - 1] + 1 not in starts[1]:
                            continue  # nor inside a word: okurigana (けたい in 抜けたい is no ケータイ)
                    found.append(e)
        qws = words if words is not None else self.analyse(text)
        lemmas = [qw.word.forms[0] for qw in qws]
        for i, lemma in enumerate(lemmas):
            for kl, e in self._synonym_by_lemma.get(lemma, ()):
                if lemmas[i : i + len(kl)] == kl:
                    first, last = qws[i].word.surface, qws[i + len(kl) - 1].word.surface
                    a = text.find(first)
                    b = text.find(last, max(a, 0)) + len(last) - 1
                    if a >= 0 and b >= a and inside_katakana_word(text, a, b):
                        continue  # フロア in フロアルール: a part of a katakana compound
                    found.append(e)
        # A run of hiragana read whole: the words SudachiPy reads in it, by dictionary form (なげた: 投げる).
        for qw in qws:
            if qw.chunk and all("\u3041" <= ch <= "\u309f" for ch in qw.chunk):
                for p in qw.word.parts:
                    found += [e for kl, e in self._synonym_by_lemma.get(p, ()) if len(kl) == 1]
        # Latin words typed for a katakana term (game loss for ゲームロス): their katakana forms joined.
        run: list[str] = []
        for qw in [*qws, None]:
            w = qw.word if qw is not None else None
            if w is not None and w.surface.isascii() and w.forms[0] != fold(w.surface):
                run.append(w.forms[0])
                continue
            if len(run) > 1:
                found += self._synonym_by_key.get(squash("".join(run)), [])
            run = []
        found += self._latin_pair_keys(qws)
        for qw in qws:  # an English word typed for a katakana key (drop: ドロップ)
            for key in self._latin_keys(qw):
                found += self._synonym_by_key[key]
        if not found and is_kana(s):
            spoken = to_katakana(s)
            # the readings found in it, in the list's order (looked up by slice, not each tried as a substring)
            rank = self._reading_rank
            held_at = [
                (i, n)
                for i in range(len(spoken))
                for n in self._reading_key_lengths.get(spoken[i], ())
                if i + n <= len(where) and spoken[i : i + n] in rank
            ]
            if held_at and particles is None:  # (SudachiPy's bounds only where some reading is held)
                particles, starts = self._key_starts(text)
            # a reading that begins inside a word SudachiPy reads is not said (かえる in つかえる); it ends where a
            # word ends, or where an ending or a particle follows: SudachiPy cuts kana it does not know anywhere
            # (すまほって as すま|ほっ|て), but けんかい holds no ケンカ, ねっとり no ネット (two reviews); an ending is
            # typed in hiragana: katakana after the reading go on with the word (イカサマダイス is no イカサマだ)
            held = {
                spoken[i : i + n]
                for i, n in held_at
                if where[i] in starts[0]
                and (
                    where[i + n - 1] + 1 in starts[1]
                    or (
                        spoken.startswith(KANA_TAIL_HEADS, i + n)
                        and not _katakana_after(text, where[i + n - 1])
                    )
                )
            }
            found += [e for r in sorted(held, key=rank.__getitem__) for e in self._synonym_by_reading[r]]
        return list(dict.fromkeys(found))

    def _key_starts(self, text: str) -> tuple[set[int], tuple[set[int], set[int]]]:
        """Where SudachiPy reads a particle or an auxiliary beginning in a short text, and where it begins and
        ends any morpheme (offsets into the text)."""
        particles, starts, ends = self.analyzer.bounds(text)
        return particles, (starts, ends)

    def _phrase_queries(self, e: int, one_word: bool = True) -> list[Q.Query]:
        """The texts' phrases of a synonym entry; standing for one word of the query, each weighs as one word
        however many words it has. Built once per entry (they depend on the list and the index only; queries
        are never changed once built, so every search may share them)."""
        hit = self._phrase_built.get((e, one_word))
        if hit is not None:
            return hit
        out = []
        for phrase in self._phrases[e]:
            terms = [
                self._word_query(QueryWord(w, kana=False)) for w in phrase if w.forms[0] not in QUERY_STOP
            ]
            if terms:
                out.append(weighted_query(Q.And(terms), WEIGHT["phrase"] / (len(terms) if one_word else 1)))
        for q in out:
            self._evaluator.keep(q)
        self._phrase_built[(e, one_word)] = out
        return out

    def _attach_phrases(
        self, words: list[QueryWord], entries: list[int]
    ) -> tuple[list[QueryWord], list[int]]:
        """The query's words with the phrases of the entries whose judge's word each one is (so that 出禁 盗み
        counts as every word found where the text says 出場停止 and 窃盗), and the entries that are no one
        word of the query (a key of several words: 勝ちを譲る), whose phrases stay signals of their own."""
        if not entries:
            return words, []
        out = [copy.copy(qw) for qw in words]
        latin = [self._latin_keys(qw) for qw in out]  # once a word, not once an entry
        loose = []
        for e in entries:
            keys = self._entry_keys[e]
            hit = False
            for qw, lat in zip(out, latin, strict=True):
                w = qw.word
                if (
                    squash(w.surface) in keys
                    or w.forms[0] in keys
                    or (qw.kana and w.reading in keys)
                    or any(k in keys for k in lat)
                ):
                    qw.phrases = qw.phrases + tuple(self._phrase_queries(e))
                    hit = True
            if not hit:
                loose.append(e)
        return out, loose

    def query(self, text: str, words: list[QueryWord] | None = None) -> Q.Query | None:
        """The whole query as one Whoosh query: every signal at once, each with its weight (`WEIGHT`).

        The section number as written; every word (all, and each); the synonym list's phrases for the
        judges' words in it; the query's character pairs (all, and some). A section that has every word
        scores the sum of both word signals, so a noise word or a nickname lowers a section, never sinks it.
        """
        text = self.as_meant(text)
        whole, content = None, text
        if words is None:
            words, whole, content = self._analyse(text)
            content = content or text
        signals: list[Q.Query] = []
        keys, heads = query_numbers(text)
        # A heading's own number (③ 【敗北】, ch10-3: `own_number_terms`): typed in its form (③), it weighs as
        # `number_item`, and the sections of that number in another form (第 3 章, Ⅲ.) as `number_form`; a
        # plain number (3) weighs in full for the sections it is the key of, and as `number_form` for the items.
        typed, other, marks = query_own_numbers(text, keys)
        typed = [k for k in typed if self._has("number", k)]
        other = [k for k in other if self._has("number", k)]
        if typed:
            signals.append(
                Q.ConstantScoreQuery(Q.Or([Q.Term("number", k) for k in typed]), WEIGHT["number_item"])
            )
            other += keys
        elif keys:  # once, however many of its forms the section has
            signals.append(Q.ConstantScoreQuery(Q.Or([Q.Term("number", k) for k in keys]), WEIGHT["number"]))
        if other:
            signals.append(
                Q.ConstantScoreQuery(Q.Or([Q.Term("number", k) for k in other]), WEIGHT["number_form"])
            )
        if keys:
            words = self._without_number_parts(words, heads, keys)
        if (
            typed
        ):  # (an item's number typed is no word a section must hold: ペナルティ③ is ペナルティ and ch10-3)
            words = [qw for qw in words if qw.word.surface not in marks] or words
        if keys and not heads:
            if (said := self._mention_query(keys)) is not None:
                signals.append(said)
            if any(f in _NUMBER_MARKS for qw in words for f in qw.word.forms) and not any(
                self._has("number", k) for k in keys
            ):
                # a section number said so (第12章) that no section has: its 第, 章 and digits are no words
                # either (they found every sentence that names another chapter, ch9's 第 11 章)
                words = [qw for qw in words if not _number_part(qw.word)]
        entries = self.synonym_entries(text, words)
        words, loose = self._attach_phrases(words, entries)
        # A word typed twice (山札をまぜたあと…またまぜても) is one word asked for, not two.
        first: dict[tuple, QueryWord] = {}
        for qw in words:
            first.setdefault((qw.word.forms[0], qw.kana, qw.word.suffix), qw)
        words = list(first.values())
        # A suffix narrows the word before it (マッチ後): a section without it still has every word asked. A
        # light part of speech (この, そこ, また: `Word.minor`) ranks a section, it is not asked for either.
        core = [qw for qw in words if not qw.word.suffix and not (qw.word.minor and not qw.chunk)] or words
        made: dict[int, tuple[list[Q.Query], list[Q.Query]]] = {}  # each word's alternatives, for both modes

        def alternatives(qw: QueryWord) -> tuple[list[Q.Query], list[Q.Query]]:
            if id(qw) not in made:
                made[id(qw)] = self._word_alternatives(qw)
            return made[id(qw)]

        word_queries = [self._word_query(qw, alternatives=alternatives(qw)) for qw in core]
        # A word that no section holds in any form (a child's word: 子, お母さん) cannot be asked for: the
        # every-word and all-but-one signals are made of the others (it would fail them everywhere).
        held = [(qw, wq) for qw, wq in zip(core, word_queries, strict=True) if self._evaluator.may_match(wq)]
        if held and len(held) < len(core):
            core, word_queries = [qw for qw, _ in held], [wq for _, wq in held]
        if len(word_queries) > 1:
            signals.append(weighted_query(Q.And(word_queries), WEIGHT["all"]))
        if 3 <= len(word_queries) <= 5 and WEIGHT["most"]:
            for i in range(len(word_queries)):
                signals.append(
                    weighted_query(Q.And(word_queries[:i] + word_queries[i + 1 :]), WEIGHT["most"])
                )
        if word_queries:
            # A word without short units is the same query in both modes: the same object, evaluated once.
            built = {id(qw): wq for qw, wq in zip(core, word_queries, strict=True)}
            each = [
                built[id(qw)]
                if id(qw) in built and not qw.word.parts
                else self._word_query(qw, "or", alternatives(qw))
                for qw in words
            ]
            signals.append(weighted_query(Q.Or(each), WEIGHT["any"]))
            if len(each) > 1:  # each word found counts the same (coordination), whatever its score
                signals.append(Q.Or([Q.ConstantScoreQuery(x, WEIGHT["coord"]) for x in each]))
            in_title = Q.And([self._title_query(qw) for qw in words])
            signals.append(weighted_query(in_title, WEIGHT["title"]))
            topic = title_topic([qw.word for qw in words])
            if topic and self._has("title_topic", topic):  # the title's words are the query's: title again
                # (an And, not a Require: Whoosh would not weigh a Require; a score of 0 Whoosh reads as 1)
                is_topic = Q.ConstantScoreQuery(Q.Term("title_topic", topic), 1e-6)
                signals.append(weighted_query(Q.And([in_title, is_topic]), WEIGHT["topic"]))
        asked = [qw.word.forms[0] for qw in words if qw.word.asked]
        if (
            asked
        ):  # a count asked for (シールド 何枚): a section giving one near the other words (５枚…シールド)
            counts = [
                t
                for c in dict.fromkeys(c for a in asked for c in (a, *SAME_COUNTER.get(a, ())))
                for qw in core
                if not qw.word.asked and self._has("counts", t := f"#{c}|{qw.word.forms[0]}")
            ]
            if counts:
                signals.append(weighted_query(Q.Or([Q.Term("counts", t) for t in counts]), WEIGHT["counts"]))
        if DEFINITION_QUESTION.search(text):
            defined = self._defined_terms(core)
            if defined:  # the section that says what the thing asked about is (not one that mentions it)
                # (each phrase defined counts: マッチ and ゲーム both in 1b's list)
                signals.append(
                    Q.Or([Q.ConstantScoreQuery(Q.Term("defines", t), WEIGHT["defines"]) for t in defined])
                )
        for e in loose:
            signals.extend(self._phrase_queries(e, one_word=False))
        if len(words) > 1:
            pairs = list(dict.fromkeys(word_pairs(self.analyzer.words(text) if whole is None else whole)))[
                :16
            ]
        else:
            pairs = []
        if pairs:
            signals.append(weighted_query(Q.Or([Q.Term("pairs", p) for p in pairs]), WEIGHT["pairs"]))
        grams = list(dict.fromkeys(char_bigrams(content)))[:32]
        if len(squash(content)) >= 2 and grams:
            signals.append(weighted_query(Q.And([Q.Term("grams", g) for g in grams]), WEIGHT["grams"]))
        if not signals:
            return None
        if len(grams) > 1:
            # Some character pairs rank what the other signals found; alone they find nothing (プレ is in
            # プレイヤー, which is no answer to プレミアム殿堂).
            some = Q.Or([Q.Term("grams", g) for g in grams], boost=WEIGHT["some_grams"])
            return Q.AndMaybe(Q.Or(signals), some)
        return Q.Or(signals)


def _by_consonants(word: str, table: dict) -> list[str]:
    """The kana words of `table` (consonants → words) a Latin word may be typed for: the same consonants and
    first letter, or failing that the same without an English plural's s; at most three, else none. Only a
    lower-case Latin word of four letters or more (DQ and BO3 are words of their own)."""
    if not (len(word) >= 4 and word.isascii() and word.isalpha() and word.islower()):
        return []
    cons = latin_consonants(word)
    for c in (cons, cons[:-1] if word.endswith("s") else ""):
        found = [k for k in table.get(c, ()) if KANA_FIRST_LETTER.get(k[0]) == word[0]]
        if len(found) > 1:
            # the nearest by their letters (promo: プロモ, puromo, not プレミアム, puremiamu)
            near = {k: edit_distance(kana_romaji(k), word) for k in found}
            found = [k for k in found if near[k] == min(near.values())]
        if found:
            return found if len(found) <= 3 else []
    return []
