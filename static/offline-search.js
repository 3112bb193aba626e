/* Search and the situation lookup in the browser, from the compact index the server exports
   (/offline/search.json, /offline/situations.json: the same analysis as the server's index).
   Used when the page was served offline; the server's answer is used whenever the network is there.
   Tiers as on the server: the section number; all the words (with the synonym list's phrases as weaker
   alternatives); any of the words; the query as a character string (bigrams, contiguous). */
(function () {
  "use strict";
  var BOOST = { t: 2.5, w: 1.0, r: 0.8, g: 0.5, tg: 1.0, tp: 1e-6 };
  var K1 = 1.2, B = 0.75;
  var TITLE = 1.0, TOPIC = 0.5; /* judgeapp/search/schema.py's WEIGHT: every word in the title; the query is the title's topic */
  var DASHES = "-‐‑‒–—―−ｰ~〜";
  var ENDINGS = "ウクスツヌフムルグブイ"; /* the kana a verb's or an adjective's dictionary form ends in (folded) */
  var GAPS = "・･ー\u3000 \t\r\n《》「」『』【】()（）[]［］〈〉<>＜＞\"'“”‘’、。,.，．:：;；!！?？/／" + DASHES;
  /* two numbers a separator joins (10-4, 10/4): a chapter and its part, as the server reads them */
  var JOINED_NUMBERS = /\d\s*[-‐‑–—―−.・\/／－．]\s*\d/;
  /* maps keyed by a judge's words have no prototype: a story of `constructor` or `__proto__` is a word like any other */
  function dict(o) { var d = Object.create(null); if (o) Object.keys(o).forEach(function (k) { d[k] = o[k]; }); return d; }
  var STOP = dict();
  ["為る", "居る", "有る", "成る", "仕舞う", "事", "物", "様", "ところ", "れる", "られる", "せる", "させる",
   "ない", "て", "た"].forEach(function (w) { STOP[fold(w)] = 1; });

  function foldChar(ch) {
    var n = ch.normalize("NFKC");
    if (n.length !== 1) n = ch;
    var c = n.charCodeAt(0);
    if (c >= 0x3041 && c <= 0x3096) n = String.fromCharCode(c + 0x60);
    var low = n.toLowerCase();
    return low.length === 1 ? low : n; /* İ lower-cases to two characters: one for one, as textnorm.py */
  }
  function fold(s) { var o = ""; for (var i = 0; i < s.length; i++) o += foldChar(s[i]); return o; }
  function squash(s) { var f = fold(s), o = ""; for (var i = 0; i < f.length; i++) if (GAPS.indexOf(f[i]) < 0) o += f[i]; return o; }
  function isKana(s) {
    if (!s) return false;
    for (var i = 0; i < s.length; i++) {
      var c = s.charCodeAt(i);
      if (!((c >= 0x3041 && c <= 0x30ff) || s[i] === "ー" || s[i] === "ｰ" || (c >= 0xff66 && c <= 0xff9f))) return false;
    }
    return true;
  }
  /* a query without the names read in it (their places from `named`), as the server's games.without_names */
  function withoutNames(text, named) {
    named.slice().reverse().forEach(function (n) { text = text.slice(0, n.start) + " " + text.slice(n.through); });
    return text.split(/\s+/).filter(Boolean).join(" ");
  }
  function unvoicedStart(k) { var h = k[0].normalize("NFD"); return h.indexOf("\u3099") < 0 ? k : h.replace("\u3099", "").normalize("NFC") + k.slice(1); }
  function katakana(ch) { return !!ch && ((ch >= "\u30a1" && ch <= "\u30fa") || ch === "ー"); }
  /* the squashed text as typed (hiragana kept), one character for each of squash's */
  function squashRaw(s) { var o = ""; for (var i = 0; i < s.length; i++) { var n = s[i].normalize("NFKC"); if (GAPS.indexOf(foldChar(s[i])) < 0) o += n.length === 1 ? n : s[i]; } return o; }
  function insideKatakana(raw, a, b) { return (katakana(raw[a]) && katakana(raw[a - 1])) || (katakana(raw[b - 1]) && katakana(raw[b])); }
  function toKatakana(s) { s = s.normalize("NFKC"); var o = ""; for (var i = 0; i < s.length; i++) { var c = s.charCodeAt(i); o += (c >= 0x3041 && c <= 0x3096) ? String.fromCharCode(c + 0x60) : s[i]; } return o; }
  function cleanQuery(s) { return (s || "").normalize("NFKC").replace(/[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]/g, " ").split(/\s+/).filter(Boolean).join(" ").slice(0, 200); }
  function bigrams(s) { s = squash(s); var o = []; if (s.length === 1) return [s]; for (var i = 0; i + 1 < s.length; i++) o.push(s.slice(i, i + 2)); return o; }

  function Index(data) {
    var self = this;
    this.data = data;
    this.docs = data.docs;
    this.N = data.docs.length;
    this.post = { t: dict(), w: dict(), r: dict(), g: dict(), tg: dict(), tp: dict() };
    this.len = { t: [], w: [], r: [], g: [], tg: [], tp: [] };
    this.avg = {};
    this.readings = dict();
    this.maxReading = 1;
    data.readings.forEach(function (r) { self.readings[r] = 1; if (r.length > self.maxReading) self.maxReading = r.length; });
    this.stop = STOP;
    this.question = dict();
    this.light = dict();
    (data.light || []).forEach(function (w) { self.light[w] = 1; });
    this.numbering = data.numbering ? new RegExp("^(?:" + data.numbering + ")$") : null;
    if (data.stop) { this.stop = dict(); data.stop.forEach(function (w) { self.stop[w] = 1; }); }
    (data.question || []).forEach(function (w) { self.question[w] = 1; });
    this.sameCounter = dict(data.same_counter || {});
    /* what asks about a game as a whole once its name is read (`asksMore`): the words, and the kanji the
       question and courtesy words are written with */
    this.aboutGame = dict(); this.aboutChars = dict();
    (data.about_game || []).forEach(function (w) { self.aboutGame[w] = 1; });
    (data.about_chars || []).forEach(function (c) { self.aboutChars[c] = 1; });
    this.surfaces = dict(data.surfaces);
    if (data.none) {
      data.none.terms = dict(data.none.terms);
      data.none.groups = dict(data.none.groups);
      this.kanaKeys = dict();
      (data.none.kana_keys || []).forEach(function (k) { self.kanaKeys[k] = 1; });
    }
    var st = data.story; /* the situation lookup: a story as the server reads it (`readStory`) */
    /* (its patterns look behind, which Safari before 16.4 cannot compile: there the story is read as typed,
       the rest of the lookup works) */
    try {
      if (st) this.story = { counter: new RegExp(st.counter, "g"), counters: st.counters, spaced: new RegExp(st.spaced),
        jpSpace: new RegExp(st.jp_space, "g"), afterParticle: new RegExp(st.after_particle),
        particleAfterName: new RegExp(st.particle_after_name), subs: st.subs.map(function (x) { return [new RegExp(x[0], "g"), x[1]]; }),
        names: dict(Object.keys(st.names).reduce(function (o, g) { o[g] = new RegExp(st.names[g], "gi"); return o; }, {})) };
    } catch (e) { this.story = null; }
    this.maxSurface = 1;
    Object.keys(data.surfaces).forEach(function (s) { if (s.length > self.maxSurface) self.maxSurface = Math.min(s.length, 16); });
    data.docs.forEach(function (d, i) {
      d.sq = squash(d.title) + "\n" + squash(d.text);
      var fields = { t: d.t.map(function (x) { return data.vocab[x]; }), w: d.w.map(function (x) { return data.vocab[x]; }),
                     r: d.r.map(function (x) { return data.vocab[x]; }), g: bigrams(d.title).concat(bigrams(d.text)),
                     tg: bigrams(d.title), tp: d.tp ? [d.tp] : [] };
      Object.keys(fields).forEach(function (f) {
        var p = self.post[f], ts = fields[f];
        self.len[f][i] = ts.length;
        ts.forEach(function (t) { var m = p[t] || (p[t] = dict()); m[i] = (m[i] || 0) + 1; });
      });
    });
    Object.keys(this.len).forEach(function (f) { var s = 0; self.len[f].forEach(function (n) { s += n; }); self.avg[f] = s / Math.max(1, self.N) || 1; });
    /* each game's names (`Game.names`, the first its name), longest first, as patterns over the folded query */
    this.games = data.games || {};
    function patterns(key) {
      var out = [];
      Object.keys(self.games).forEach(function (g) {
        (self.games[g][key] || []).forEach(function (n) {
          var cs = Array.from(fold(n)).filter(function (c) { return !/[\s・･]/.test(c); });
          if (cs.length < 2 || /[\u3041-\u309f]/.test(n)) return;
          var src = cs.map(function (c) { return c === "ー" ? "ー?" : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }).join("[\\s・･]*");
          out.push({ n: cs.length, re: new RegExp(src, "g"), game: g });
        });
      });
      return out.sort(function (a, b) { return b.n - a.n; });
    }
    this.names = patterns("names");
    /* a game's own names that a search of that game leaves out (the server's `scope_names`) */
    this.scopeNames = patterns("scope");
  }

  /* The games a query names in its words, as the server reads them (judgeapp/search/games.py): a name begins and
     ends where its script does (リセ not in リセット, DM not in ADMIN), never typed in hiragana (しっかり, とりせつ);
     a kanji name not beside another kanji (the browser has no dictionary to find a word's bounds, the server
     asks SudachiPy); a particle right after it goes with it (DMで, リセの), from a short list where the server
     reads SudachiPy's parts of speech. */
  var NAME_PARTICLES = ["って", "では", "でも", "だと", "とは", "には", "から", "の", "で", "が", "は", "を", "に", "も", "と", "や"];
  function script(ch) {
    if (!ch) return "";
    /* (not ・ U+30FB: リセ・遅刻 names Lycee, the dot is a gap) */
    if (ch === "ー" || ch === "ｰ" || (ch >= "\u30a1" && ch <= "\u30fa") || (ch >= "\u30fc" && ch <= "\u30ff") || (ch >= "\uff66" && ch <= "\uff9f")) return "katakana";
    if (/[A-Za-z0-9]/.test(ch)) return "latin";
    if (/[\u4e00-\u9fff々]/.test(ch)) return "kanji";
    if (ch >= "\u3041" && ch <= "\u309f") return "hiragana";
    return "";
  }
  var PART_BREAK = /[\s、。，．,!?！？…]/;
  Index.prototype.named = function (text, scope) {
    var f = fold(text), found = [];
    (scope ? this.scopeNames : this.names).forEach(function (n) {
      n.re.lastIndex = 0;
      var m;
      while ((m = n.re.exec(f))) {
        var a = m.index, b = a + m[0].length;
        if (a === b) { n.re.lastIndex++; continue; }
        if (found.some(function (x) { return a < x.end && x.start < b; })) continue;
        if (/[\u3041-\u309f]/.test(text.slice(a, b))) {
          /* in a game's own search, typed in hiragana as a whole part of the query (いじんでん 時間切れ) */
          if (scope && (a === 0 || PART_BREAK.test(text[a - 1])) && (b === text.length || PART_BREAK.test(text[b])))
            found.push({ name: text.slice(a, b), game: n.game, start: a, end: b, through: b });
          continue;
        }
        var first = script(text[a]), last = script(text[b - 1]);
        if (first === "kanji" && text[a - 1] === "の") continue; /* この大会の大会規定: a tournament's rules, not the game's */
        if (first && first !== "hiragana" && script(text[a - 1]) === first) continue;
        if (last && last !== "hiragana" && script(text[b]) === last) continue;
        var through = b;
        NAME_PARTICLES.some(function (p) {
          if (text.slice(b, b + p.length) === p && script(text[b + p.length]) !== "hiragana") { through = b + p.length; return true; }
          return false;
        });
        found.push({ name: text.slice(a, b), game: n.game, start: a, end: b, through: through });
      }
    });
    return found.sort(function (x, y) { return x.start - y.start; });
  };

  /* A query tree: {op: "term", f, t, boost} | {op: "and"|"or", q: [...], boost} → Map doc → score */
  Index.prototype.evalQ = function (q) {
    var self = this, out = new Map();
    if (q.op === "term") {
      var p = this.post[q.f][q.t];
      if (!p) return out;
      var ids = Object.keys(p), df = ids.length;
      var idf = Math.log(this.N / (df + 1)) + 1; /* Whoosh's idf */
      ids.forEach(function (k) {
        var i = +k, tf = p[k], dl = self.docs[i].dl && q.f in self.docs[i].dl ? self.docs[i].dl[q.f] : self.len[q.f][i];
        var s = idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * dl / self.avg[q.f]));
        out.set(i, s * BOOST[q.f] * (q.boost || 1));
      });
      return out;
    }
    if (q.q.length === 1) return this.evalQ(q.q[0]); /* as Whoosh: a compound of one is that query, unboosted */
    var parts = q.q.map(function (x) { return self.evalQ(x); });
    if (!parts.length) return out;
    if (q.op === "and") {
      parts.sort(function (a, b) { return a.size - b.size; });
      parts[0].forEach(function (s, i) {
        var tot = s;
        for (var j = 1; j < parts.length; j++) { if (!parts[j].has(i)) return; tot += parts[j].get(i); }
        out.set(i, tot * (q.boost || 1));
      });
    } else {
      parts.forEach(function (m) { m.forEach(function (s, i) { out.set(i, (out.get(i) || 0) + s * (q.boost || 1)); }); });
    }
    return out;
  };

  function term(f, t, boost) { return { op: "term", f: f, t: t, boost: boost }; }
  function wordQ(forms, kana, reading, parts, mode) {
    var alts = [];
    forms.forEach(function (f) { alts.push(term("w", f)); alts.push(term("t", f)); });
    if (parts && parts.length) {
      var ps = parts.map(function (p) { return term("w", p); });
      alts.push(mode === "or" ? { op: "or", q: ps, boost: 0.5 } : { op: "and", q: ps });
    }
    if (kana && reading) alts.push(term("r", reading));
    return { op: "or", q: alts };
  }

  /* The query's words: known surfaces of the corpus, longest first (the browser has no dictionary). */
  Index.prototype.words = function (chunk, keepStop) {
    var s = fold(chunk), out = [], i = 0, asked = false;
    while (i < s.length) {
      /* a run of kana beside other characters (ちゅうい２) that the corpus has as a reading: that word, read */
      var run = i;
      while (run < s.length && isKana(s[run])) run++;
      if (run - i >= 2 && (i > 0 || run < s.length) && !this.surfaces[s.slice(i, run)] && this.readings[s.slice(i, run)] && !(i > 0 && isKana(s[i - 1]))) {
        out.push({ surface: s.slice(i, run), forms: [s.slice(i, run)], parts: [], suffix: false });
        i = run; asked = false;
        continue;
      }
      var found = null;
      for (var j = Math.min(s.length, i + this.maxSurface); j > i; j--) {
        var piece = s.slice(i, j);
        if (this.surfaces[piece] && (j - i > 1 || !isKana(piece))) { found = piece; break; }
      }
      if (found) {
        var e = this.surfaces[found];
        /* 何枚, 何点: the counter asked for ranks, it is not required (as on the server) */
        /* a counter also as the same counter said otherwise (2回: ２度), as on the server */
        var forms = this.sameCounter[e[0][0]] ? e[0].concat(this.sameCounter[e[0][0]]) : e[0];
        if (keepStop || !this.stop[e[0][0]]) out.push({ surface: found, forms: forms, parts: e[1], suffix: asked });
        asked = !!this.question[e[0][0]];
        i += found.length;
      } else { i += 1; asked = false; }
    }
    return out;
  };

  Index.prototype.segmentReading = function (k) {
    var pieces = [], i = 0, covered = 0;
    while (i < k.length) {
      var hit = false;
      for (var j = Math.min(k.length, i + this.maxReading); j > i + 1; j--) {
        var piece = k.slice(i, j);
        /* a piece after the first, of three kana or more, may begin voiced where its word does not (rendaku:
           ムコウ|ジアイ is 無効|試合), as on the server (textnorm.unvoiced_start) */
        if (!this.readings[piece] && i > 0 && j - i >= 3) piece = unvoicedStart(piece);
        if (this.readings[piece]) { pieces.push(piece); covered += j - i; i = j; hit = true; break; }
      }
      if (!hit) i += 1;
    }
    return covered >= 0.7 * k.length ? pieces : [];
  };

  Index.prototype.textQuery = function (text, mode, boost) {
    var self = this, parts = [];
    text.split(" ").forEach(function (chunk) {
      if (!chunk) return;
      if (isKana(chunk)) {
        var k = fold(toKatakana(chunk));
        var alts = [term("w", k), term("t", k), term("r", k)];
        var pieces = self.segmentReading(k);
        if (pieces.length > 1) alts.push({ op: "and", q: pieces.map(function (p) { return term("r", p); }) });
        var ws = self.words(chunk);
        if (ws.length) alts.push({ op: "and", q: ws.map(function (w) { return wordQ(w.forms, true, w.surface, w.parts); }) });
        parts.push({ op: "or", q: alts });
        return;
      }
      var ws = self.words(chunk), core = ws.filter(function (w) { return !w.suffix; });
      (mode === "or" || !core.length ? ws : core).forEach(function (w) { parts.push(wordQ(w.forms, isKana(w.surface), fold(toKatakana(w.surface)), w.parts, mode)); });
    });
    if (!parts.length) return null;
    return { op: mode === "or" ? "or" : "and", q: parts.slice(0, 24), boost: boost || 1 };
  };

  /* As on the server: a query whose words are a title's topic (時間切れ: 「時間切れ」) asks for that section, the
     title's words again (weighs half) where the topic is the query's. */
  Index.prototype.titleQueries = function (text) {
    var self = this, ws = [], forms = dict();
    text.split(" ").forEach(function (chunk) {
      var cut = self.words(chunk);
      if (chunk && isKana(chunk)) { /* a run of kana, whole: its reading (as the server keeps it) */
        var k = fold(toKatakana(chunk));
        ws.push({ surface: k, forms: [k], parts: cut.map(function (w) { return w.forms[0]; }), kana: true });
      } else ws = ws.concat(cut);
    });
    if (!ws.length || !this.numbering) return [];
    var inTitle = { op: "and", boost: TITLE, q: ws.map(function (w) {
      /* the word in the title: any form (unweighted), its short units, or its characters (不戦勝 cut 不 + 戦勝) */
      var alts = w.forms.map(function (f) { return term("t", f, 1 / BOOST.t); });
      if (w.kana) (self.data.spoken[w.forms[0]] || []).forEach(function (x) { /* the words it is the reading of */
        alts.push(term("t", x, 1 / BOOST.t));
        if (x.length >= 2) alts.push({ op: "and", q: Array.from(new Set(bigrams(x))).map(function (g) { return term("tg", g); }) });
      });
      if (w.parts.length) alts.push({ op: "and", q: w.parts.map(function (p) { return term("t", p, 1 / BOOST.t); }) });
      var grams = Array.from(new Set(bigrams(w.surface)));
      if (grams.length > 1 || w.surface.length === 2) alts.push({ op: "and", q: grams.map(function (g) { return term("tg", g); }) });
      return { op: "or", q: alts };
    }) };
    ws.forEach(function (w) { var f = w.forms[0]; if (!self.light[f] && !self.stop[f] && !self.numbering.test(f)) forms[f] = 1; });
    var topic = Object.keys(forms).sort().join("|");
    if (!topic || !this.post.tp[topic]) return [inTitle];
    return [inTitle, { op: "and", q: [{ op: "and", q: inTitle.q }, term("tp", topic)], boost: TOPIC }];
  };

  function phraseQuery(means) { /* an analysed phrase: all its words */
    return { op: "and", q: means.map(function (forms) { return wordQ(forms, false); }) };
  }

  Index.prototype.synonymAlternatives = function (text) {
    var self = this, s = squash(text), raw = squashRaw(text), out = [], found = [];
    var words = this.words(text), lemmas = words.map(function (w) { return w.forms[0]; });
    (this.data.synonyms || []).forEach(function (e) {
      var rest = null;
      for (var k = 0; k < e.keys.length && rest === null; k++) {
        var key = squash(e.keys[k]);
        var at = key ? s.indexOf(key) : -1;
        /* as on the server, a katakana key inside a longer katakana word is not the key (ペナ in ペナルティ) */
        if (at >= 0 && insideKatakana(raw, at, at + key.length)) at = -1;
        if (at >= 0 && !(/^[\x00-\x7f]+$/.test(key) && !new RegExp("(^|[^a-z0-9])" + key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "($|[^a-z0-9])").test(s))) {
          rest = s.slice(0, at) + " " + s.slice(at + key.length);
          break;
        }
        var kl = e.lemmas[k] || [];
        for (var i = 0; kl.length && i + kl.length <= lemmas.length; i++) {
          if (kl.every(function (x, j) { return lemmas[i + j] === x; })) {
            var a = s.indexOf(squash(words[i].surface)), b = s.indexOf(squash(words[i + kl.length - 1].surface), Math.max(a, 0));
            if (a >= 0 && b >= a && insideKatakana(raw, a, b + squash(words[i + kl.length - 1].surface).length)) continue; /* フロア in フロアルール */
            rest = words.filter(function (_, j) { return j < i || j >= i + kl.length; }).map(function (w) { return w.surface; }).join(" ");
            break;
          }
        }
      }
      if (rest === null && e.stems) {
        var spoken = toKatakana(s);
        for (var st = 0; st < e.stems.length && rest === null; st++) {
          var whole = isKana(e.stems[st]) ? spoken : s, tail = whole.slice(e.stems[st].length);
          if (whole.indexOf(e.stems[st]) === 0 && tail.length >= 1 && tail.length <= 3 && isKana(tail)) rest = "";
        }
      }
      if (rest !== null) { rest = isKana(rest.replace(/ /g, "")) ? "" : rest.trim(); found.push([e, rest]); }
    });
    if (!found.length && isKana(s)) {
      var spoken = toKatakana(s);
      (this.data.synonyms || []).forEach(function (e) {
        if (e.readings.some(function (r) { return r.length >= 3 && spoken.indexOf(r) >= 0; })) found.push([e, ""]);
      });
    }
    found.forEach(function (fr) {
      var restQ = fr[1] ? self.textQuery(fr[1]) : null;
      fr[0].means.forEach(function (m) {
        if (!m.length) return;
        out.push({ op: "and", q: [phraseQuery(m)].concat(restQ ? [restQ] : []), boost: 0.4 });
        if (restQ) out.push({ op: "and", q: [phraseQuery(m)], boost: 0.4 });
      });
    });
    if (found.length > 1) out.push({ op: "and", q: found.map(function (fr) { return phraseQuery(fr[0].means[0]); }), boost: 0.4 });
    return out.slice(0, 16);
  };

  /* Nothing fits, as the server's lookup says it (judgeapp/lookup.py, "nothing fits"): the story's words, each
     weighted as the server weighs it (how few of the text's lines hold it; a word the text lacks weighs most and
     is found nowhere), and the share of that weight the game's evidence holds at all, against the threshold
     the server exports (judgeapp/offline.py `nothing_fits_export`). The words are read by longest match on the
     corpus's own words (the evidence's terms as well as this index's surfaces); a single kana, digits and
     punctuation are no word. */
  Index.prototype.storyCoverage = function (text) {
    var self = this, ev = this.data.none, words = [];
    function idf(df) { return Math.log(1 + (ev.lines - df + 0.5) / (df + 0.5)); }
    /* a word the games' text lacks but holds its dictionary synonym group (アタック where a text says 攻撃) is
       found there at 0.8, and a word no line spells weighs as its group, as on the server (`groups`) */
    function add(alts) {
      var df = 0, mask = 0, g = alts.length ? ev.groups[alts[0]] : null;
      alts.forEach(function (a) { var e = ev.terms[a]; if (e) { df = Math.max(df, e[0]); mask |= e[1]; } });
      if (g && !df) df = g[0];
      words.push({ weight: idf(df), mask: mask, group: g ? g[1] & ~mask : 0 });
    }
    text.split(" ").forEach(function (chunk) {
      var s = fold(chunk), i = 0, from = -1;
      if (!s) return;
      if (isKana(s) && (ev.terms["r:" + s] || ev.terms[s])) { add([s, "r:" + s]); return; } /* a word in kana, whole */
      /* inside a longer chunk, hiragana is grammar or a word the browser cannot cut out (いない is not 以内) */
      function hiragana(a, b) { for (var k = a; k < b; k++) { var c = chunk.charCodeAt(k); if (c >= 0x3041 && c <= 0x309f) return true; } return false; }
      /* a stretch the browser cannot read is a word the text lacks, unless it is a round's label (R2: ラウンド, as
         the server reads it), a word without meaning (子) or a game's name no line spells (DM) */
      function flush(at) {
        var piece = from >= 0 ? s.slice(from, at) : "";
        if (piece === "r" && /[0-9]/.test(s[at] || "")) add([fold("ラウンド"), "r:" + fold("ラウンド")]);
        else if (piece && !self.stop[piece] && !STOP[piece] && (ev.names || []).indexOf(piece) < 0) add([]);
        from = -1;
      }
      function formsOf(w) { var e = self.surfaces[w]; return e ? e[0].concat(e[1].filter(function (x) { return x.length > 1; })) : [w]; }
      while (i < s.length) {
        var found = null, shorter = null;
        for (var j = Math.min(s.length, i + 16); j > i; j--) {
          var piece = s.slice(i, j);
          /* ... but a chunk's first word before a particle is no grammar: うしろの人 begins with the text's 後ろ,
             read by its reading (いないから stays grammar: not 以内) */
          var lead = i === 0 && j - i > 2 && j < s.length && "ノガヲハニヘトモ".indexOf(s[j]) >= 0 && ev.terms["r:" + piece];
          /* ... and so is a chunk's first kana word right before a kanji (わざと余計に: わざと), where the corpus has
             it as a word that means something (しかし, いない: 居る are grammar, as on the server) */
          var sf = self.surfaces[piece];
          if (!lead && i === 0 && j - i > 2 && j < s.length && isKana(piece) && !isKana(s[j]) && GAPS.indexOf(s[j]) < 0 && !/[0-9a-z]/.test(s[j]) &&
              sf && !self.stop[sf[0][0]] && !STOP[sf[0][0]]) lead = true;
          /* ... and so is a key of the synonym list written in hiragana (うそ, わざと), which the server finds
             wherever the story spells it */
          if (self.kanaKeys[piece] && hiragana(i, j)) lead = true;
          if ((j - i > 1 || !isKana(piece)) && (lead || !(isKana(piece) && hiragana(i, j))) && (self.surfaces[piece] || ev.terms[piece] || (j - i > 2 && isKana(piece) && ev.terms["r:" + piece]))) { found = piece; break; }
        }
        if (!isKana(s[i]) && !(from >= 0 && /[\u3400-\u9fff\uf900-\ufaff々]/.test(s[i - 1]))) {
          /* a verb or adjective written with its kanji and conjugated (言えば, 盗まれた, 抜けたい): the kanji, and
             the kana that ends its dictionary form (言ウ, 盗ム) or the kana kept before ル (抜ケル), where the
             corpus has that word; a kept-kana form as long as the word found or longer wins over it, the word
             staying one of its forms (持ちかけられて: 持チカケル, not the 持チ of 持ち物; 持チカケ as well where a
             text has it); never from inside a kanji word the browser could not read (避難した is 避難, which
             the server reads whole, not 避 and 難い) */
          var before = found ? j : i;
          shorter = found;
          var k = i;
          while (k < s.length && !isKana(s[k]) && GAPS.indexOf(s[k]) < 0 && !/[0-9]/.test(s[k])) k++;
          if (k > i && k < s.length && isKana(s[k])) {
            var stem = s.slice(i, k), run = 0;
            while (k + run < s.length && run < 4 && isKana(s[k + run])) run++;
            /* the kana kept before ル, the longest first: 持ちかけられて is 持チカケル, 見えた 見える before 見る,
               出た 出る before 出す */
            for (var n = run; n >= 1 && k + n >= before; n--) if (self.surfaces[s.slice(i, k + n) + "ル"]) { found = s.slice(i, k + n) + "ル"; j = k + n; break; }
            for (var u = 0; u < ENDINGS.length && !found; u++) if (self.surfaces[stem + ENDINGS[u]]) { found = stem + ENDINGS[u]; j = k + 1; }
          }
        }
        if (found) {
          flush(i);
          var forms = formsOf(found);
          if (shorter && shorter !== found) forms = forms.concat(formsOf(shorter));
          if (!self.stop[forms[0]] && !STOP[forms[0]]) add(forms.concat(isKana(found) ? ["r:" + found] : []));
          i = j;
        } else {
          if (isKana(s[i]) || GAPS.indexOf(s[i]) >= 0 || /[0-9]/.test(s[i])) flush(i);
          else if (from < 0) from = i;
          i += 1;
        }
      }
      flush(s.length);
    });
    var total = 0, got = {}, found = {};
    words.forEach(function (w) {
      total += w.weight;
      ev.games.forEach(function (g, k) {
        var share = w.mask & (1 << k) ? 1 : w.group & (1 << k) ? 0.8 : 0;
        if (share) { got[g] = (got[g] || 0) + share * w.weight; found[g] = (found[g] || 0) + 1; }
      });
    });
    var out = {};
    ev.games.forEach(function (g) { out[g] = { coverage: total ? (got[g] || 0) / total : 0, found: found[g] || 0 }; });
    return out;
  };

  /* Whether what is left of a query without the games' names asks anything of a text (遅刻, 先攻), not only
     about the game itself (って何, とは, ？, のルール, について, a lone kana), as the server reads it
     (SearchIndex._asks_more): 2 for a word of the corpus that is none of those, 1 (unsure) for what no word of
     the corpus covers, 0 for nothing */
  Index.prototype.asksMore = function (rest) {
    var self = this;
    return Math.max.apply(null, [0].concat(rest.split(" ").map(function (chunk) {
      /* what a judge types after a name to ask about the game, taken off its end first (のことについて教えて
         ください: `asking_tails`, longest first), then what is left read as words */
      chunk = fold(chunk);
      var tails = self.data.asking_tails || [], cut = true;
      while (chunk && cut) {
        cut = tails.some(function (t) {
          if (chunk.length < t.length || chunk.slice(-t.length) !== t) return false;
          chunk = chunk.slice(0, -t.length); return true;
        });
      }
      return chunk ? self.asksMorePiece(chunk) : 0;
    })));
  };

  Index.prototype.asksMorePiece = function (chunk) {
    var self = this, left = squash(chunk), ws = this.words(chunk, true);
    ws.forEach(function (w) { left = left.replace(w.surface, ""); });
    if (ws.some(function (w) {
      var f = w.forms[0];
      return !self.stop[f] && !self.aboutGame[f] && !(w.surface.length === 1 && isKana(w.surface));
    }) || this.readings[left]) return 2;
    /* what no word of the corpus covers: a letter, digit or kanji that no question or courtesy word is written
       with (教えて, 何: `about_chars`; symbols and emoji are none), or three kana or more once the asking tails
       are off (はんそく): unsure, searched, and the game's text where the search finds nothing (`search`) */
    var chars = Array.from(left);
    var other = chars.some(function (ch) { return /[\p{L}\p{N}]/u.test(ch) && !isKana(ch) && !self.aboutChars[ch]; });
    return other || chars.filter(isKana).length >= 3 ? 1 : 0;
  };

  /* A query that only names games: the games' sections from the start of their text, in its order (headings
     without text of their own left out), each game named as found; `rest` is the query itself (the page links
     to the game's library, as the server's does) */
  Index.prototype.gameItself = function (typed, named, limit) {
    var self = this, shown = [], games = [];
    named.forEach(function (n) { if (games.indexOf(n.game) < 0) { games.push(n.game); shown.push({ name: n.name, game: n.game, found: true }); } });
    var each = games.map(function (g) { var o = []; self.docs.forEach(function (d, i) { if (d.game === g && (d.text || "").trim()) o.push(i); }); return o; });
    var order = [], most = Math.max.apply(null, each.map(function (o) { return o.length; }));
    for (var k = 0; k < most; k++) each.forEach(function (o) { if (k < o.length) order.push(o[k]); }); /* several games: in turn */
    return { query: typed, named: shown, rest: typed, total: order.length,
             hits: order.slice(0, limit).map(function (i) { return self.hit(i, []); }) };
  };

  /* A story as the server's lookup reads it (judgeapp/lookup.py `_story`, its patterns exported): a counter in
     hiragana after a number as the texts write it (2かい: 2回), a story written word by word (a particle between
     spaces) without the spaces beside its Japanese, 目 after a count, and the games' names left out (the game's
     own, or every game's without one); `spaced`: the writer's spaces kept */
  Index.prototype.readStory = function (text, game, spaced) {
    var st = this.story;
    text = text.replace(st.counter, function (m, a, b) { return st.counters[a || b]; });
    if (!spaced && text.search(st.spaced) >= 0) {
      /* the spaces between Japanese words go, but the one after a lone particle (ひと が あいて を) */
      text = text.replace(st.jpSpace, function (m, at, whole) { return st.afterParticle.test(whole.slice(0, at)) ? " " : ""; });
    }
    st.subs.forEach(function (x) { text = text.replace(x[0], x[1]); });
    var names = st.names[game || ""];
    return cleanQuery(names ? text.replace(names, " ") : text);
  };

  /* The games a story names (judgeapp/lookup.py `_names_it`), in the games' order: not by two latin letters or
     fewer (DM in 「DMで暴言」 is as likely a direct message) */
  Index.prototype.storyNames = function (text) {
    var st = this.story;
    if (!st) return [];
    return Object.keys(st.names).filter(function (g) {
      return g && (text.match(new RegExp(st.names[g].source, "gi")) || []).some(function (n) {
        n = n.replace(st.particleAfterName, ""); /* (the particle the pattern takes after a name) */
        return !(/^[\x00-\x7f]*$/.test(n) && squash(n).length <= 2);
      });
    });
  };

  /* Whether a game's text covers the story (as the server: one word found needs more of the story than two) */
  Index.prototype.fits = function (c) {
    var ev = this.data.none;
    return c.coverage >= ev.threshold_one || (c.coverage >= ev.threshold && c.found >= 2);
  };

  Index.prototype.search = function (query, game, limit, asTyped) {
    var self = this, text = cleanQuery(query), typed = text;
    limit = limit || 10;
    var found = [], seen = new Set(), matching = new Set();
    if (!text) return { query: text, total: 0, hits: [] };
    var spaced = text;
    if (this.story) { spaced = this.readStory(text, game, true); text = this.readStory(text, game); }
    /* without a game, the games the query names come first (their sections' scores weigh more, as on the
       server); their names are no words of the query */
    var named = game || asTyped ? [] : this.named(text), weight = dict(), shown = [], unsure = null;
    if (named.length) {
      var rest = withoutNames(text, named);
      /* nothing but a name, or a name and what asks about the game (リセ, DM, リセってなに): its text from the start */
      var asks = this.asksMore(rest);
      if (!asks) return this.gameItself(typed, named, limit);
      if (asks === 1) unsure = named;
      text = rest;
    }
    if (game && !asTyped) {
      /* in a game's search, its own name narrows nothing (イジンデン 遅延): left out, unless it is all */
      var own = this.named(text, true).filter(function (n) { return n.game === game; });
      if (own.length) {
        var left = withoutNames(text, own);
        var asksIn = this.asksMore(left);
        if (asksIn) { text = left; if (asksIn === 1) unsure = own; }
        else { /* its name alone (DM in dm-senshu's search): its text from the start, as without a game */
          var alone = this.gameItself(typed, own, limit);
          return { query: typed, named: [], rest: "", total: alone.total, hits: alone.hits };
        }
      }
    }
    if (named.length) {
      named.forEach(function (n) {
        if (!weight[n.game]) shown.push({ name: n.name, game: n.game });
        weight[n.game] = self.data.named_weight || 2;
      });
    }
    function ok(i) { return !game || self.docs[i].game === game; }
    function run(q, n, check, each) {
      if (!q) return;
      var scores = self.evalQ(q), ranked = [];
      scores.forEach(function (s, i) { if (ok(i)) ranked.push([i, s * (weight[self.docs[i].game] || 1) * (each ? each(i) : 1)]); });
      ranked.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; });
      if (!check) ranked.forEach(function (r) { matching.add(r[0]); });
      ranked.slice(0, n).forEach(function (r) {
        if (check && !check(self.docs[r[0]])) return;
        matching.add(r[0]);
        if (!seen.has(r[0])) { seen.add(r[0]); found.push(r[0]); }
      });
    }
    var key = squash(text), numKey = key;
    /* two numbers a separator joins are a chapter and its part (10-4, 10/4: ch10-4 by its key 10.4), never the
       one number their digits make (104), as the server reads them (analysis._JOINED_NUMBERS) */
    var joined = text.normalize("NFKC").match(/^\s*(?:第|ch\.?\s*)?(\d+)\s*(?:章|条)?\s*[-‐‑–—―−.・/]\s*(?:第)?(\d+)\s*(?:項|節|条)?\s*$/i);
    if (joined) numKey = joined[1] + "." + joined[2];
    else if (JOINED_NUMBERS.test(text)) numKey = "";
    /* a circled digit or a roman numeral typed alone is an item's own number first (③: ③ 【敗北】, ~c3), then
       the section of that number; a plain number is the section's first, then the items' (the server's
       number_item and number_form: search.analysis.own_number_terms) */
    var item = query.normalize("NFC").trim().match(/^(?:([\u2460-\u2473])|([\u2160-\u216b\u2170-\u217b]))$/);
    /* the item's number as a number (NFKC makes ③ a 3 but Ⅱ the letters II): Ⅱ and ⅱ are 2, ~r2 */
    if (item) { var cp = (item[1] || item[2]).charCodeAt(0); numKey = String(item[1] ? cp - 0x245f : cp - (cp >= 0x2170 ? 0x216f : 0x215f)); }
    var own = /^\d+$/.test(numKey) ? ["~c", "~r", "~"].map(function (f) { return f + numKey; }) : [];
    if (item) own = item[1] ? ["~c" + numKey] : ["~r" + numKey];
    function owned(list) {
      self.docs.forEach(function (d, i) { if (ok(i) && !seen.has(i) && list.some(function (k) { return d.num.indexOf(k) >= 0; })) { seen.add(i); found.push(i); matching.add(i); } });
    }
    if (item) owned(own);
    if (numKey && numKey.length <= 12) {
      this.docs.forEach(function (d, i) { if (ok(i) && d.num.indexOf(numKey) >= 0 && !seen.has(i)) { seen.add(i); found.push(i); matching.add(i); } });
    }
    if (!item && own.length) owned(own);
    var numbered = found.length;
    var alts = [this.textQuery(text)].concat(this.titleQueries(text), this.synonymAlternatives(text)).filter(Boolean);
    if (alts.length) run({ op: "or", q: alts }, limit);
    if (found.length === numbered) {
      /* the situation lookup: an answer that holds one of the story's words alone weighs ONE_WORD (as the
         server's ranking by coverage, lookup.py ONE_WORD); a story of one word is not moved */
      var anyQ = this.textQuery(text, "or"), held = null;
      if (this.data.none && anyQ && anyQ.q.length > 1) {
        var per = anyQ.q.map(function (x) { return self.evalQ(x); });
        held = function (i) { return per.filter(function (m) { return m.has(i); }).length <= 1 ? self.data.none.one_word : 1; };
      }
      run(anyQ, limit, null, held);
    }
    if (found.length < limit && key.length >= 2) {
      var grams = Array.from(new Set(bigrams(text)));
      run({ op: "and", q: grams.map(function (g) { return term("g", g); }) }, Math.max(limit * 3, 30),
          function (d) { return d.sq.indexOf(key) >= 0; });
    }
    if (this.data.none) { /* the situation lookup: a game's answers only where the game's text covers the story */
      /* the story as the server reads it, and with the writer's spaces kept: the browser, which has no
         dictionary, finds a hiragana word only between them (かった in 「どっち か が かった」); nothing fits
         only where neither reading fits */
      var cov = this.storyCoverage(text), kept = spaced !== text && this.storyCoverage(spaced);
      var fitsIn = function (g) { return self.fits(cov[g]) || (kept && self.fits(kept[g])); };
      found = found.filter(function (i) { return fitsIn(self.docs[i].game); });
      var fits = this.data.none.games.some(function (g) { return (!game || g === game) && fitsIn(g); });
      if (!fits) return { query: typed, total: 0, hits: [], none: true, message: game ? this.data.none.message : this.data.none.message_all };
    }
    var marks = this.words(text).map(function (w) { return w.surface; }).concat([key]);
    /* whether any section of each game named matches the rest (else the other games' are all there is) */
    shown.forEach(function (n) { n.found = Array.from(matching).some(function (i) { return self.docs[i].game === n.game; }); });
    /* DMで暴言: two latin letters naming a game whose text holds nothing of the rest are more likely a direct
       message than the game: searched as typed, as the server does */
    if (shown.length && shown.every(function (n) { return !n.found && n.name.length <= 2 && /^[\x00-\x7f]+$/.test(n.name); }))
      return this.search(query, game, limit, true);
    if (unsure && !found.length) { /* what follows the name may only ask about the game (リセ 教えてね) */
      var itself = this.gameItself(typed, unsure, limit);
      return game ? { query: typed, named: [], rest: "", total: itself.total, hits: itself.hits } : itself;
    }
    return { query: typed, named: shown, rest: named.length ? text : "", total: Math.max(matching.size, Math.min(found.length, limit)),
             hits: found.slice(0, limit).map(function (i) { return self.hit(i, marks); }) };
  };

  /* a result as the page lists it; a level's own line with the note beside its badge and who may issue it */
  Index.prototype.hit = function (i, marks) {
    var d = this.docs[i];
    return { id: d.id, game: d.game, title: d.title, doc: d.doc, pen: d.pen || "", meta: d.meta, warn: d.warn,
             href: d.href, snippet: snippet(d.snip || d.text || d.title, marks) };
  };

  function snippet(text, marks) {
    var f = fold(text), at = -1, len = 0;
    marks.filter(function (m) { return m && m.length > 1; }).sort(function (a, b) { return b.length - a.length; }).some(function (m) {
      var i = f.indexOf(m); if (i >= 0) { at = i; len = m.length; return true; } return false;
    });
    var start = Math.max(0, at - 20), end = Math.min(text.length, start + 110);
    var frag = document.createDocumentFragment();
    if (start > 0) frag.appendChild(document.createTextNode("…"));
    if (at >= 0) {
      frag.appendChild(document.createTextNode(text.slice(start, at)));
      var mk = document.createElement("mark"); mk.textContent = text.slice(at, at + len); frag.appendChild(mk);
      frag.appendChild(document.createTextNode(text.slice(at + len, end)));
    } else frag.appendChild(document.createTextNode(text.slice(start, end)));
    if (end < text.length) frag.appendChild(document.createTextNode("…"));
    return frag;
  }

  var loaded = {};
  function load(kind) {
    if (!loaded[kind]) {
      loaded[kind] = fetch("/offline/" + kind + ".json").then(function (r) {
        if (!r.ok) throw new Error(r.status); return r.json();
      }).then(function (d) { return new Index(d); });
    }
    return loaded[kind];
  }

  function servedOffline() { var b = document.getElementById("offline-banner"); return b && !b.hidden; }

  function el(tag, attrs, text) { var e = document.createElement(tag); Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); }); if (text) e.textContent = text; return e; }

  function renderSearch() {
    var params = new URLSearchParams(location.search), q = params.get("q") || "", game = params.get("game") || "";
    var box = document.getElementById("offline-results");
    if (!box || !q.trim() || !servedOffline()) return;
    var input = document.querySelector("main form.search input[name=q]"), sel = document.querySelector("main form.search select[name=game]");
    if (input) input.value = q;
    if (sel) sel.value = game;
    var prompt = document.querySelector("main p.empty"); if (prompt) prompt.remove();
    document.title = cleanQuery(q) + " | judgeapp"; /* as the server titles the results page */
    load("search").then(function (ix) {
      var res = ix.search(q, game || null, 10);
      box.textContent = "";
      box.appendChild(el("p", { "class": "meta offline-note" }, "オフラインの検索結果（この端末に保存した索引）：「" + res.query + "」" + res.hits.length + " 件"));
      if (!res.hits.length) { box.appendChild(el("p", { "class": "empty" }, "「" + res.query + "」は見つかりませんでした。")); return; }
      if (res.named && res.named.length) { /* as the server's page says it (templates/rules/search.html) */
        var found = res.named.filter(function (n) { return n.found; }), silent = res.named.filter(function (n) { return !n.found; });
        function read(ns) { return ns.map(function (n) { return "『" + n.name + "』を " + ix.games[n.game].names[0]; }).join("、"); }
        var line = (found.length ? read(found) + " と読み、" + (found.length === 1 ? "その" : "それらの") + "規定を" + (res.rest !== res.query ? "先に" : "初めから") + "表示しています。" : "") +
          (silent.length ? read(silent) + " と読みましたが、" + (silent.length === 1 ? "その" : "それらの") + "規定には当てはまるものが見つかりませんでした。" +
            (found.length ? "" : "ほかのゲームの規定を表示しています。") : "");
        var said = el("p", { "class": "meta named-games", role: "status" }, line);
        found.forEach(function (n) {
          said.appendChild(document.createTextNode(" "));
          said.appendChild(res.rest !== res.query
            ? el("a", { href: "/search?" + new URLSearchParams({ q: res.rest, game: n.game }) }, ix.games[n.game].short + "の規定だけを検索")
            : el("a", { href: "/rules/" + n.game }, ix.games[n.game].short + "の規定の目次"));
        });
        box.appendChild(said);
      }
      var ol = el("ol", { "class": "results" });
      res.hits.forEach(function (h) {
        var li = el("li"), a = el("a", { "class": "title", href: "/rules/" + h.id }, h.title);
        var p = el("p", { "class": "snippet" }); p.appendChild(h.snippet);
        li.appendChild(a); li.appendChild(el("div", { "class": "meta" }, h.doc)); li.appendChild(p); ol.appendChild(li);
      });
      box.appendChild(ol);
      window.judgeappRememberMarks && window.judgeappRememberMarks();
    }).catch(function () { box.appendChild(el("p", { "class": "notice" }, "オフラインの索引が保存されていません。電波のある所で一度開いてください。")); });
  }

  function renderLookup() {
    var box = document.getElementById("offline-lookup");
    var params = new URLSearchParams(location.search), q = params.get("q") || "";
    if (!box || !q.trim() || !servedOffline()) return;
    var game = box.getAttribute("data-game"); /* empty: every game, grouped by game (the home page's lookup) */
    var names = JSON.parse(box.getAttribute("data-games") || "{}");
    var input = document.querySelector("main form.search input[name=q]"); if (input) input.value = q;
    load("situations").then(function (ix) {
      var res = ix.search(q, game || null, game ? 8 : 24);
      box.textContent = "";
      box.appendChild(el("p", { "class": "meta offline-note" }, "オフラインの結果：「" + res.query + "」に近い状況"));
      if (res.none) { /* as the server's page says it (templates/wizard/_lookup_results.html) */
        box.appendChild(el("p", { "class": "empty", role: "status" }, "「" + res.query + "」：" + res.message +
          (game ? "下の質問から選んでください。" : "ゲームを選んで、質問に答えて判定してください。")));
        return;
      }
      if (!res.hits.length) {
        box.appendChild(el("p", { "class": "empty" }, "「" + res.query + "」に当たる状況が見つかりませんでした。" +
          (game ? "下の質問から選んでください。" : "ゲームを選んで、質問から探してください。")));
        return;
      }
      function list(hits) {
        var ol = el("ol", { "class": "results" });
        hits.forEach(function (h) {
          var parts = h.id.split("/"), li = el("li");
          li.appendChild(el("a", { "class": "title", href: h.href || "/wizard/" + parts[0] + "/" + parts[1] }, h.title));
          if (h.pen) {
            var m = el("div", { "class": "meta" }); m.appendChild(el("span", { "class": "badge" }, h.pen));
            if (h.meta) m.appendChild(document.createTextNode(" " + h.meta));
            li.appendChild(m);
          }
          if (h.warn) li.appendChild(el("p", { "class": "small warn" }, h.warn));
          var p = el("p", { "class": "snippet" }); p.appendChild(h.snippet); li.appendChild(p); ol.appendChild(li);
        });
        return ol;
      }
      if (game) { box.appendChild(list(res.hits)); return; }
      var groups = [], by = {};
      res.hits.forEach(function (h) {
        var g = h.id.split("/")[0];
        if (!by[g]) { by[g] = []; groups.push(g); }
        if (by[g].length < 3) by[g].push(h);
      });
      /* the game the judge chose last first, where its text fits; said where it does not (as the server) */
      /* the page's own note first (kept offline as the judge moves: the cached page's is from when it was kept) */
      /* ... but a game the story names goes first (as the server's `search_all`) */
      var first = ix.storyNames(q)[0] || null;
      try { if (!first) first = localStorage.getItem("judgeapp.game"); } catch (e) { /* none kept */ }
      if (!first) first = box.getAttribute("data-first");
      if (first && names[first]) {
        if (by[first]) groups = [first].concat(groups.filter(function (g) { return g !== first; }));
        else box.appendChild(el("p", { "class": "meta", role: "status" }, names[first] + "の規定には、この状況に当てはまるものが見つかりませんでした。ほかのゲームの規定："));
      }
      groups.forEach(function (g) {
        box.appendChild(el("h2", {}, names[g] || g));
        box.appendChild(list(by[g]));
      });
    }).catch(function () { box.appendChild(el("p", { "class": "notice" }, "オフラインの索引が保存されていません。電波のある所で一度開いてください。")); });
  }

  window.judgeappOffline = { load: load, Index: Index, squash: squash, fold: fold };
  document.addEventListener("DOMContentLoaded", function () { renderSearch(); renderLookup(); });
})();
