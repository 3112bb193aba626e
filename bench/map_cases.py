"""Map a case writer's quotes to section ids and split each table by sha1(q) % 2 (even = tune).

A writer (a session that saw only ../shared/seeds/) quotes, for each case, the passage of the source text that
answers it; this script finds the sections whose text holds the quote (folded as the search folds), drops a
case whose quote is found nowhere or in more than four sections, normalises the penalty names the writers
spell otherwise (出場停止処分 → 出場停止, 試合での敗北 → 試合の敗北, tcg-taikai's 敗北 by its quote: ゲーム or
マッチ) and writes the halves. It prints counts only: the reporting halves' rows are never shown. Add the new
files to tests/cases/tables.yaml.

usage: python bench/map_cases.py WRITER_DIR OUT_DIR N
  WRITER_DIR holds search.yaml, situations.yaml, none.yaml (the writer's, quotes from the seeds)
  writes OUT_DIR/search_unseen_tuneN.yaml, search_unseen_checkN.yaml, situations_tuneN.yaml,
  situations_reportN.yaml, situations_noneN.yaml; prints counts only (never the reporting rows).
"""

import datetime
import hashlib
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from judgeapp.corpus import load_corpus  # noqa: E402
from judgeapp.textnorm import squash  # noqa: E402

src, out, n = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
out.mkdir(parents=True, exist_ok=True)
corpus = load_corpus(ROOT / "rules_corpus")
texts = {s.id: squash(s.title + "\n" + s.text) for s in corpus.sections.values()}
GAMES = {"tcg-taikai", "ijinden", "lycee", "dm-senshu"}


def sections_for(quote, game):
    if not quote:
        return []
    pieces = [quote] + sorted(re.split(r"[\n。]|…|\.\.\.", quote), key=len, reverse=True)
    for piece in pieces:
        q = squash(piece)
        if len(q) < 6:
            continue
        hits = [sid for sid, t in texts.items() if q in t and (not game or sid.startswith(game + "/"))]
        if hits:
            # the deepest sections that hold it (a parent whose own text holds it stays too)
            return hits
    return []


def half(q):
    return "tune" if int(hashlib.sha1(q.encode()).hexdigest(), 16) % 2 == 0 else "report"


def penalty(game, p, quote):
    if p in (None, "", "null", "なし"):
        return None
    p = re.sub(r"\s+", "", str(p))
    p = p.replace("出場停止処分", "出場停止").replace("試合での敗北", "試合の敗北")
    p = re.sub(r"[（(][NW][)）]", "", p)
    if p.startswith("出場停止"):
        p = "出場停止"
    if game == "tcg-taikai" and p == "敗北":
        ctx = quote or ""
        p = "マッチの敗北" if "マッチ" in ctx else "ゲームの敗北" if "ゲーム" in ctx else p
    if game == "lycee" and p in ("除外", "トーナメント除外", "トーナメントから除外"):
        p = "トーナメントからの除外"
    if game == "lycee" and p in ("敗北", "試合敗北", "負け"):
        p = "試合の敗北"
    return p


def decided_loss(game, decides):
    """A loss the writer put as what the text decides (penalty null) where the API names it as the penalty
    (PRODUCT.md: a direct consequence such as ゲームの敗北, マッチの敗北, 試合の敗北): そのゲームは敗北,
    その試合を敗北したものとされる. Lycee's 投了 (a player's own choice: ゲームを敗北) stays null."""
    d = re.sub(r"\s+", "", str(decides or ""))
    if "敗北" not in d:
        return None
    if game == "tcg-taikai":
        return "マッチの敗北" if "マッチ" in d else "ゲームの敗北" if "ゲーム" in d else None
    if game == "lycee" and "試合" in d:
        return "試合の敗北"
    return None


HEAD = (
    "# Written from the four source texts only by a session that never saw rules_corpus/, infractions/,\n"
    "# synonyms.yaml or the tests (writer {n}, {day}; quotes mapped to section ids by script),\n"
    "# split by a hash of the query.\n# half: {half}\n"
)


def dump(path, rows, h):
    path.write_text(
        HEAD.format(
            n=n,
            day=datetime.date.today().isoformat(),
            half="tune (tuned on)" if h == "tune" else "report (never tuned on)",
        )
        + (yaml.safe_dump(rows, allow_unicode=True, sort_keys=False, width=200) if rows else "[]\n")
    )


stats = {}
search = yaml.safe_load((src / "search.yaml").read_text()) or []
halves = {"tune": [], "report": []}
dropped = 0
for c in search:
    game = c.get("game") if c.get("game") in GAMES else None
    ids = sections_for(c.get("quote"), game)
    if not ids or len(ids) > 4:
        dropped += 1
        continue
    row = {"q": str(c["q"])}
    if game and c.get("game_filter", True) and c.get("filter"):
        row["game"] = game
    row["expect"] = ids
    row["kind"] = c.get("kind", "word")
    halves[half(row["q"])].append(row)
dump(out / f"search_unseen_tune{n}.yaml", halves["tune"], "tune")
dump(out / f"search_unseen_check{n}.yaml", halves["report"], "report")
stats["search"] = (len(search), dropped, len(halves["tune"]), len(halves["report"]))

sits = yaml.safe_load((src / "situations.yaml").read_text()) or []
halves = {"tune": [], "report": []}
dropped = 0
for c in sits:
    game = c.get("game")
    ids = sections_for(c.get("quote"), game)
    if game not in GAMES or not ids or len(ids) > 4:
        dropped += 1
        continue
    row = {
        "q": str(c["q"]),
        "game": game,
        "penalty": penalty(game, c.get("penalty"), c.get("quote")) or decided_loss(game, c.get("decides")),
        "discretion": bool(c.get("discretion")),
        "sections": ids,
        "decides": c.get("decides"),
    }
    halves[half(row["q"])].append(row)
dump(out / f"situations_tune{n}.yaml", halves["tune"], "tune")
dump(out / f"situations_report{n}.yaml", halves["report"], "report")
stats["situations"] = (len(sits), dropped, len(halves["tune"]), len(halves["report"]))

nones = yaml.safe_load((src / "none.yaml").read_text()) if (src / "none.yaml").exists() else []
rows = [
    {
        "q": str(c["q"]),
        "game": c["game"],
        "penalty": None,
        "discretion": False,
        "quote": None,
        "decides": None,
        "none": True,
    }
    for c in nones or []
    if c.get("game") in GAMES
]
dump(out / f"situations_none{n}.yaml", rows, "report")
stats["none"] = (len(nones or []), len(rows))
print(stats)
