"""At the venue with no signal: real headless Chromium at 390×844, the network cut after one online visit.

Offline reading, wizard, search, recording with later delivery (exactly once), dark mode, compression and
caching headers, tap targets and axe-core. Expected answers come from the corpus, the policies and the query
table (tests/cases/search_queries.yaml), never from the offline code itself."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from .conftest import load_cases, tables

pytestmark = pytest.mark.browser
AXE = Path(__file__).parent / "vendor" / "axe.min.js"


def ready(page) -> bool:
    return page.evaluate("caches.match('/offline/ready').then(r => !!r)")


def wait_ready(page) -> None:
    for _ in range(1200):  # up to 120 s, looked at every 0.1 s
        if ready(page):
            return
        page.wait_for_timeout(100)
    raise AssertionError("the worker did not finish precaching")


@pytest.fixture
def offline_phone(phone, live_server):
    phone.goto(live_server + "/")
    phone.evaluate("navigator.serviceWorker.ready")
    wait_ready(phone)
    return phone


def online_title(client, url: str) -> str:
    html = client.get(url).get_data(as_text=True)
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1).replace("&amp;", "&")


def first_answer(lookup, q: str, game: str | None) -> str | None:
    """The server's first answer that the offline index holds: an infraction, an accumulation rule, or a level's
    own line (`<game>/level:<id>`); not the sections that decide no penalty (as bench/offline_lookup_agree.py)."""
    for m in lookup.search(q, game=game, limit=8).matches:
        if m.answer.infraction or m.answer.rule:
            return m.answer.key
        if m.level is not None:
            return f"{m.answer.game}/level:{m.level.id}"
    return None


def test_every_section_and_wizard_page_opens_offline(app, client, offline_phone, live_server, tmp_path):
    phone = offline_phone
    lib = app.extensions["judgeapp.library"]
    kept = set(
        phone.evaluate(
            "caches.keys().then(ks => caches.open(ks[0])).then(c => c.keys())"
            ".then(rs => rs.map(r => new URL(r.url).pathname + new URL(r.url).search))"
        )
    )
    missing = [s.url for s in lib.corpus.sections.values() if s.url not in kept]
    assert not missing, missing[:5]
    phone.context.set_offline(True)
    for game in lib.corpus.games.values():  # one section of each game, opened as a judge would
        sec = next(s for s in lib.corpus.sections.values() if s.game == game.id and s.text.strip())
        phone.goto(live_server + sec.url)
        assert phone.locator("h1").inner_text() == sec.title
        assert phone.locator("#offline-banner").is_visible()
        assert lib.corpus.version in phone.locator("#offline-banner").inner_text()
        assert phone.title() == online_title(client, sec.url)
    phone.screenshot(path=str(tmp_path / "offline-section.png"))
    # A deep link to a section by its anchor lands on the section.
    phone.goto(live_server + "/rules/tcg-taikai/floor-rules#6b-iii")
    phone.wait_for_url("**/rules/tcg-taikai/floor-rules/6b-iii")
    assert phone.locator("h1").inner_text() == lib.corpus.sections["tcg-taikai/floor-rules/6b-iii"].title
    # The wizard: every game, taps to an outcome; each tap changes the URL.
    for game, policy in lib.policies.games.items():
        phone.goto(live_server + f"/wizard/{game}")
        for _ in range(len(policy.nodes) + 1):
            if f"/wizard/{game}/" in phone.url:
                break
            before = phone.url
            phone.locator("ul.answers a").last.click()
            assert phone.url != before
        inf_id = phone.url.split(f"/wizard/{game}/")[1].split("?")[0]
        assert phone.locator("h1").inner_text() == policy.infractions[inf_id].name
        assert phone.locator("#offline-banner").is_visible()
    # Answers in another order and an unrelated parameter still find the kept outcome.
    from .test_wizard import path_to

    answers = path_to(lib.policies.games["lycee"], "late-seat")
    query = "&".join(f"{k}={v}" for k, v in reversed(list(answers.items()))) + "&utm=x"
    phone.goto(live_server + "/wizard/lycee?" + query)
    assert phone.locator("h1").inner_text() == lib.policies.games["lycee"].infractions["late-seat"].name
    phone.screenshot(path=str(tmp_path / "offline-outcome.png"), full_page=True)


def test_offline_search_agrees_with_the_server(app, client, offline_phone, live_server, tmp_path):
    phone = offline_phone
    lib = app.extensions["judgeapp.library"]
    cases = load_cases("search_queries.yaml")
    expected = []
    for case in cases:
        hits = lib.index.search(case["q"], game=case.get("game"), limit=10).hits
        expected.append(hits[0].id if hits else None)
    phone.context.set_offline(True)
    phone.goto(live_server + "/search")
    phone.wait_for_function("window.judgeappOffline")
    got = phone.evaluate(
        """async (cases) => {
        const ix = await judgeappOffline.load('search');
        return cases.map(c => {
            const r = ix.search(c.q, c.game || null, 10);
            return r.hits.length ? r.hits[0].id : null;
        });
    }""",
        [{"q": c["q"], "game": c.get("game")} for c in cases],
    )
    agree = sum(1 for a, b in zip(got, expected, strict=False) if a == b)
    print(f"offline search agrees with the server's first result for {agree}/{len(cases)}")
    for c, a, b in zip(cases, got, expected, strict=False):
        if a != b:
            print(f"  differs: {c['q']!r} ({c.get('game')}): offline {a}, server {b}")
    # 117/130 until the synonym list's 海外 (2026-12-02) moved the server's first answer for 海外で出禁 to 3a, the
    # section it stands for, where the offline ranking keeps 3b: 116/130
    assert agree / len(cases) >= 0.89
    # The situation lookup, over the situations table, against the server's own lookup.
    situations = load_cases("situations.yaml")
    sit_expected = [first_answer(lib.lookup, case["q"], case["game"]) for case in situations]
    sit_got = phone.evaluate(
        """async (cases) => {
        const ix = await judgeappOffline.load('situations');
        return cases.map(c => {
            const r = ix.search(c.q, c.game, 8);
            return r.hits.length ? r.hits[0].id : null;
        });
    }""",
        [{"q": c["q"], "game": c["game"]} for c in situations],
    )
    sit_agree = sum(1 for a, b in zip(sit_got, sit_expected, strict=False) if a == b)
    print(f"offline situation lookup agrees with the server's first result for {sit_agree}/{len(situations)}")
    for c, a, b in zip(situations, sit_got, sit_expected, strict=False):
        if a != b:
            print(f"  differs: {c['q']!r} ({c['game']}): offline {a}, server {b}")
    assert sit_agree / len(situations) >= 0.9
    # Nothing fits: offline says so for most stories the server finds nothing for (the none table), and never
    # for a story the server answers (the covered tables it was calibrated on).
    stories = (
        [
            {
                "q": c["q"],
                "game": c.get("game"),
                "server_none": lib.lookup.search(c["q"], game=c["game"]).none,
            }
            for t in tables.tuning("situations")
            for c in load_cases(t)
        ]
        + [
            # the synonym list's words read offline as the server reads them, neither way wider (a review's stories)
            {"q": q, "game": g, "server_none": lib.lookup.search(q, game=g).none, "review": True}
            for q, g in (
                ("BO3の途中で", "tcg-taikai"),
                ("相手が暴言を吐いた", "dm-senshu"),
                ("相手を馬鹿にした", "lycee"),
                ("カードが傷んだ", "dm-senshu"),
                ("インテンショナルドローを提案した", "dm-senshu"),
                # a story's first kana word is read by its reading only before a particle (うしろの人: 後ろ);
                # いないから stays grammar, not 以内 (a review's story)
                ("いないから失格になる?", "ijinden"),
                # a verb written in kanji and conjugated is read by its dictionary form (抜けたい: 抜ける, 言えば:
                # 言う, one of the lookup's words without meaning), not as a word no text has
                ("ドラフトの途中で抜けたい", "tcg-taikai"),
                ("悪質な人がいたらどこに言えば", "lycee"),
                # the longest kept-kana form wins over a shorter word of the text (持ちかけられて: 持ちかける, not
                # the 持ち of 持ち物; a fourteenth writer's story)
                ("談合 持ちかけられて乗った側も?", "ijinden"),
                # a first kana word before a kanji is a word only where the corpus has it as one that means
                # something (わざと余計に: わざと; しかし stays grammar: a review's story)
                ("しかし遅刻", "lycee"),
            )
        ]
        + [
            {"q": c["q"], "game": c.get("game"), "server_none": True, "none_table": True}
            for c in load_cases("situations_none.yaml")
        ]
    )
    offline_none = phone.evaluate(
        """async (cases) => {
        const ix = await judgeappOffline.load('situations');
        return cases.map(c => !!ix.search(c.q, c.game, 8).none);
    }""",
        stories,
    )
    wrongly = [c["q"] for c, off in zip(stories, offline_none, strict=True) if off and not c["server_none"]]
    assert not wrongly, wrongly
    review = [
        (c["q"], off, c["server_none"])
        for c, off in zip(stories, offline_none, strict=True)
        if c.get("review")
    ]
    assert [r for r in review if r[1] != r[2]] == []
    none_rows = [off for c, off in zip(stories, offline_none, strict=True) if c.get("none_table")]
    print(f"offline says nothing fits for {sum(none_rows)}/{len(none_rows)} of situations_none.yaml")
    assert sum(none_rows) >= 0.65 * len(none_rows)  # 16/24 (2026-12-01)
    # a judge's words that are names of JavaScript's own object properties are words like any other (a review
    # found constructor and __proto__ threw a TypeError in both indexes)
    odd = ["constructor", "__proto__", "toString", "hasOwnProperty", "constructor 遅刻", "prototype"]
    answered = phone.evaluate(
        """async (qs) => {
        const s = await judgeappOffline.load('search'), t = await judgeappOffline.load('situations');
        return qs.map(q => [s.search(q, null, 10).hits.length >= 0, !!t.search(q, 'lycee', 8), !!t.search(q, null, 8)]);
    }""",
        odd,
    )
    assert answered == [[True, True, True]] * len(odd)
    # ... with the server's message, on the game's page and on the home page's lookup across games.
    phone.goto(live_server + "/wizard/tcg-taikai?q=会場が停電した")
    phone.wait_for_selector("#offline-lookup p.empty")
    assert lib.lookup.search("会場が停電した", game="tcg-taikai").none
    said = phone.locator("#offline-lookup p.empty").inner_text()
    assert (
        said
        == "「会場が停電した」：この文書には、この状況に当てはまる規定が見つかりませんでした。下の質問から選んでください。"
    )
    assert phone.locator("#offline-lookup ol.results").count() == 0
    phone.goto(live_server + "/wizard/lookup?q=会場が停電した")
    phone.wait_for_selector("#offline-lookup p.empty")
    assert lib.lookup.search_all("会場が停電した").none
    assert (
        "どのゲームの規定にも、この状況に当てはまるものが見つかりませんでした。"
        in phone.locator("#offline-lookup p.empty").inner_text()
    )
    # The game the judge opened last goes first offline too (the page keeps it: no request sets the cookie).
    q = "観客が口出しした"
    order = [g for g, _ in lib.lookup.search_all(q).groups()]
    phone.goto(live_server + f"/wizard/{order[-1]}")
    phone.goto(live_server + "/wizard/lookup?q=" + q)
    phone.wait_for_selector("#offline-lookup h2")
    assert phone.locator("#offline-lookup h2").first.inner_text() == lib.corpus.games[order[-1]].name
    # And the form, as a judge uses it with no signal.
    phone.goto(live_server + "/")
    phone.fill("input[name=q]", "遅刻")
    phone.select_option("select[name=game]", "lycee")
    phone.click("main form.search button[type=submit]")
    phone.wait_for_selector("#offline-results ol.results a.title")
    assert "オフライン" in phone.locator("#offline-results .offline-note").inner_text()
    assert phone.title() == online_title(client, "/search?q=遅刻&game=lycee")
    first = phone.locator("main ol.results a.title").first.get_attribute("href")
    assert first == "/rules/" + lib.index.search("遅刻", game="lycee").hits[0].id
    phone.screenshot(path=str(tmp_path / "offline-search.png"), full_page=True)
    # A game named in the query's words, offline as on the server (judgeapp/search/games.py): read as a whole
    # word only, its sections first (weighed as the server weighs them), the others after, and said.
    named = phone.evaluate(
        """async (qs) => {
        const ix = await judgeappOffline.load('search');
        return qs.map(q => {
            const r = ix.search(q, null, 20);
            return [r.named.map(n => n.game), r.hits.map(h => h.game), r.named.map(n => n.found)];
        });
    }""",
        [
            "リセ 遅刻 何分で負け",
            "イジン 観戦 アドバイス 禁止",
            "リセットしていい?",
            "りせ 遅刻",
            "全国大会規定",
            "DMで暴言を送られた",
            "デュエルマスターズ 遅刻",
        ],
    )
    assert named[0][0] == ["lycee"] and named[0][1][0] == "lycee" and len(set(named[0][1])) > 1
    assert named[0][2] == [True]
    assert named[1][0] == ["ijinden"] and "ijinden" in named[1][1][:3]
    assert named[2][0] == named[3][0] == named[4][0] == []
    # DM as a direct message, dm-senshu's text silent on the rest: searched as typed, as on the server
    assert named[5][0] == [] and named[5][1][:1] != ["dm-senshu"]
    # the named game's text silent (dm-senshu has no 遅刻): said, and the other games' sections shown
    assert named[6][0] == ["dm-senshu"] and named[6][2] == [False] and named[6][1][:1] == ["lycee"]
    phone.goto(live_server + "/search?q=リセ 遅刻 何分で負け")
    phone.wait_for_selector("#offline-results p.named-games")
    said = phone.locator("#offline-results p.named-games")
    assert "『リセ』を Lycee TCG と読み、その規定を先に表示しています。" in said.inner_text()
    assert said.locator("a").first.get_attribute("href") == "/search?" + urlencode(
        {"q": "遅刻 何分で負け", "game": "lycee"}
    )
    first = phone.locator("#offline-results ol.results a.title").first.get_attribute("href")
    assert first == "/rules/" + lib.index.search("リセ 遅刻 何分で負け").hits[0].id
    # A name alone, or with only what asks about the game: that game's text from its start, as on the server;
    # two numbers a separator joins: a chapter and its part (10/4 is ch10-4, not 104), as on the server.
    alone = [
        "リセ",
        "リセってなに",
        "イジン",
        "デュエマって何？",
        "DM",
        "イジンデンのルール",
        "リセのこと教えて",
        "リセのことについて教えてください",
        "リセ 何分",
        "リセ 分",
        "リセとDM",
        "リセ 教えてね",
        "リセってなあに",
        "リセ 宜しくお願いします",
        "リセ 😀😀",
    ]
    # (and a rendaku; an item's number typed alone, circled or roman: Ⅱ is ~r2, though NFKC makes it II)
    numbers = ["10/4", "10-4", "１０／４", "104", "7-1", "6b-iii", "むこうじあい", "③", "Ⅱ", "ⅰ"]
    got = phone.evaluate(
        """async (qs) => {
        const ix = await judgeappOffline.load('search');
        return qs.map(q => { const r = ix.search(q, null, 5);
            return [r.hits.map(h => h.id), (r.named || []).map(n => [n.game, n.found])]; });
    }""",
        alone + numbers,
    )
    for q, (ids, said) in zip(alone + numbers, got, strict=True):
        server = lib.index.search(q, limit=5)
        if q in alone:
            assert ids == [h.id for h in server.hits] and said == [[n.game, n.found] for n in server.named], q
        else:
            assert ids[:1] == [server.hits[0].id], q
    assert got[len(alone)][0][0] == "ijinden/floor-rules/ch10-4"
    # the name alone in its game's own search: that game's text from the start, as on the server
    in_game = phone.evaluate(
        """async () => { const ix = await judgeappOffline.load('search');
            return ix.search('DM', 'dm-senshu', 5).hits.map(h => h.id); }"""
    )
    assert in_game == [h.id for h in lib.index.search("DM", game="dm-senshu", limit=5).hits]
    # In a game's search, its own name narrows nothing (in hiragana too, as a whole part), as on the server.
    own = [
        ("イジンデン 遅延", "ijinden", "遅延"),
        ("じかんぎれ いじんでん", "ijinden", "じかんぎれ"),
        ("デュエマ サイドボード", "dm-senshu", "サイドボード"),
    ]
    got = phone.evaluate(
        """async (qs) => {
        const ix = await judgeappOffline.load('search');
        return qs.map(([q, g, rest]) => [ix.search(q, g, 5).hits.map(h => h.id), ix.search(rest, g, 5).hits.map(h => h.id)]);
    }""",
        own,
    )
    for (q, _, _), (ids, rest_ids) in zip(own, got, strict=True):
        assert ids and ids == rest_ids, q
    phone.goto(live_server + "/search?q=リセってなに")
    phone.wait_for_selector("#offline-results p.named-games")
    said = phone.locator("#offline-results p.named-games")
    assert "『リセ』を Lycee TCG と読み、その規定を初めから表示しています。" in said.inner_text()
    assert said.locator("a").first.get_attribute("href") == "/rules/lycee"
    # The situation lookup too.
    phone.goto(live_server + "/wizard/lycee?q=" + "遅刻")
    phone.wait_for_selector("#offline-lookup ol.results a.title")
    server_first = next(
        m.answer.infraction.id
        for m in lib.lookup.search("遅刻", game="lycee", limit=8).matches
        if m.answer.infraction
    )
    first_lookup = phone.locator("#offline-lookup a.title").first.get_attribute("href")
    assert first_lookup == f"/wizard/lycee/{server_first}"
    # each answer with its badge, as the server shows it, and its description (not the judges' words list)
    policy = lib.policies.games["lycee"]
    inf = policy.infractions[server_first]
    first_item = phone.locator("#offline-lookup ol.results li").first
    assert policy.penalty_text(inf) in first_item.locator(".badge").inner_text()
    snippet = first_item.locator(".snippet").inner_text()
    assert snippet.strip("…") and snippet.strip("…") in inf.description  # a window of the description only
    # An accumulation rule offline as on the server: its level, and the section it rests on (was missing offline:
    # 注意を2回もらった listed unrelated infractions).
    phone.goto(live_server + "/wizard/lycee?q=" + "注意を2回もらった")
    phone.wait_for_selector("#offline-lookup ol.results a.title")
    server = lib.lookup.search("注意を2回もらった", game="lycee", limit=8).matches[0].answer
    rule = server.rule
    assert rule is not None and rule.kind == "converts"
    first_item = phone.locator("#offline-lookup ol.results li").first
    assert first_item.locator("a.title").get_attribute("href") == f"/rules/{rule.citations[0].section}"
    assert first_item.locator("a.title").inner_text() == rule.text
    assert first_item.locator(".badge").inner_text().startswith(policy.rule_badge(rule) + " 自動で適用")
    # And the home page's lookup across every game, grouped by game as the server groups it.
    phone.goto(live_server + "/")
    phone.fill("input[aria-label='状況で探す（全ゲーム）']", "遅刻")
    phone.locator("input[aria-label='状況で探す（全ゲーム）'] + button").click()
    phone.wait_for_selector("#offline-lookup h2")
    headings = phone.locator("#offline-lookup h2").all_inner_texts()
    names = {g.name for g in lib.corpus.games.values()}
    assert headings and set(headings) <= names and len(set(headings)) == len(headings)
    lycee = lib.corpus.games["lycee"].name
    if lycee in headings:
        group = phone.locator("#offline-lookup h2", has_text=lycee).locator("xpath=following-sibling::ol[1]")
        assert group.locator("a.title").first.get_attribute("href").startswith("/wizard/lycee/")


class Switchable:
    """The app on a fixed local port that can be cut (connections refused) and brought back: the network
    as a phone at the venue sees it. Playwright's offline mode alone does not stop the requests a service
    worker passes through."""

    def __init__(self, app):
        import socket

        self.app = app
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = None
        self.start()

    def start(self):
        import threading

        from werkzeug.serving import make_server

        self.server = make_server("127.0.0.1", self.port, self.app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def switchable(app):
    s = Switchable(app)
    yield s
    if s.server is not None:
        s.stop()


def wait_event_kept(phone, url: str) -> None:
    """Until the worker has kept the signed-in judge's event pages (its "/offline/event-ready" mark, put when
    a run has written them all) and `url` among them: a page seen in the cache while the worker still writes
    the others is not yet a page the worker answers with (under load it missed one just after)."""
    for _ in range(600):  # up to 60 s, looked at every 0.1 s
        if phone.evaluate(
            "(u) => caches.match('/offline/event-ready').then(r => !!r && caches.match(u)).then(r => !!r)",
            url,
        ):
            return
        phone.wait_for_timeout(100)
    raise AssertionError("the worker did not keep the event's pages")


def cut(phone, server):
    phone.context.set_offline(True)
    server.stop()


def restore(phone, server):
    server.start()
    phone.context.set_offline(False)


def make_event(phone, base: str, players: list[tuple[str, str]]) -> int:
    phone.goto(base + "/events/new")
    phone.fill("input[name=name]", "電波のない大会")
    phone.select_option("select[name=game]", "lycee")
    phone.fill("input[name=date]", "2026-12-01")
    phone.fill("input[name=organizer]", "主催")
    phone.fill("input[name=passcode]", "offline-pass")
    phone.click("form.stack button[type=submit]")
    phone.wait_for_selector("text=を作りました")
    phone.click("text=選手を登録する")
    event_id = int(re.search(r"/events/(\d+)/", phone.url).group(1))
    for number, name in players:
        phone.fill("input[name=number]", number)
        phone.fill("input[name=name]", name)
        phone.click("form.stack button[type=submit] >> nth=0")
        phone.wait_for_selector("text=人を登録しました")
    return event_id


def penalties(app) -> list:
    from sqlalchemy import select

    from judgeapp.events.models import Penalty

    with app.extensions["judgeapp.db"].reader() as s:
        return list(s.scalars(select(Penalty)))


def confirm_record(phone, round_: str, facts: str) -> None:
    """On the record page: the round, the first level, the facts; preview, then confirm."""
    phone.fill("input[name=round]", round_)
    phone.select_option("select[name=level]", index=1)
    phone.fill("textarea[name=facts]", facts)
    phone.click("button[value=preview]")
    phone.click("button[name=action][value=confirm]")


def kept_record_page(app, phone, base: str) -> str:
    """An event with one player, its pages kept by the service worker: the player's record page's URL."""
    from sqlalchemy import select

    from judgeapp.events.models import Player

    event_id = make_event(phone, base, [("001", "山田太郎")])
    phone.goto(base + f"/events/{event_id}")
    phone.evaluate("navigator.serviceWorker.ready")
    wait_ready(phone)
    with app.extensions["judgeapp.db"].reader() as s:
        pid = s.scalars(select(Player)).one().id
    record_url = f"/events/{event_id}/record?player={pid}"
    wait_event_kept(phone, record_url)
    return record_url


def test_offline_lookup_reads_a_story_as_the_server(app, offline_phone, live_server, tmp_path):
    """The server's lookup passes 13 and 14 offline (the browser offline once the worker has kept the app): a
    level's own line answers that level, with who alone may issue it; a story written word by word, a counter
    in hiragana and the game's own name in the story are read as the server reads them."""
    from judgeapp.lookup import match_json

    phone = offline_phone
    lib = app.extensions["judgeapp.library"]
    phone.context.set_offline(True)
    # ijinden ch10-3 「…に対して与えられます」: 【敗北】, the judge deciding, and who alone may issue it
    q = "悪質な違反でゲームが続けられない"
    m = lib.lookup.search(q, game="ijinden").matches[0]
    assert m.level is lib.policies.games["ijinden"].levels["defeat"]
    server = match_json(m)
    phone.emulate_media(color_scheme="dark")
    phone.goto(live_server + "/wizard/ijinden?" + urlencode({"q": q}))
    phone.wait_for_selector("#offline-lookup ol.results li")
    assert phone.locator("#offline-banner").is_visible()
    first = phone.locator("#offline-lookup ol.results li").first
    assert first.locator("a.title").inner_text() == server["name"]
    assert first.locator("a.title").get_attribute("href") == server["url"]
    assert first.locator(".badge").inner_text() == server["penalty"] == "敗北"
    assert m.level_meta in first.locator(".meta").inner_text()
    warn = first.locator("p.warn").inner_text()
    assert warn == m.level_issuer and warn in server["discretion_note"]
    phone.screenshot(path=str(tmp_path / "offline-level-line-dark.png"))
    # the same first answer offline as on the server: a story written word by word with a counter in
    # hiragana (2かい: 2回), the game's own name in the story (イジンデン, リセ: left out of its words)
    stories = [
        ("注意 を 2かい うけた ダイバー は どう なる", "ijinden"),
        ("イジンデン で 悪質な違反", "ijinden"),
        ("リセ で 遅刻", "lycee"),
    ]
    got = phone.evaluate(
        """async (cases) => {
        const ix = await judgeappOffline.load('situations');
        return cases.map(c => { const r = ix.search(c[0], c[1], 8); return r.hits.length ? r.hits[0].id : null; });
    }""",
        stories,
    )
    assert got == [first_answer(lib.lookup, q, g) for q, g in stories]
    assert got[1] == "ijinden/level:defeat"
    # a browser that cannot compile the story's patterns (a lookbehind: Safari before 16.4) reads the story as
    # typed, and the lookup still answers (a review: the whole index had failed to open)
    fallback = phone.evaluate(
        """async () => {
        const data = await (await fetch('/offline/situations.json')).json();
        data.story.jp_space = '(?<';  // a pattern this browser cannot compile either
        const ix = new judgeappOffline.Index(data);
        const r = ix.search('遅刻', 'lycee', 8);
        return [ix.story === null, r.hits.length > 0, !!r.none];
    }"""
    )
    assert fallback == [True, True, False]
    # the games a story names come first on the home page's lookup, as the server's `search_all` reads them
    stories = ["TCG大会規定 で 遅刻", "イジンデン で 悪質な違反", "DMで暴言を言われた", "遅刻"]
    named = phone.evaluate(
        """async (qs) => { const ix = await judgeappOffline.load('situations'); return qs.map(q => ix.storyNames(q)); }""",
        stories,
    )
    assert (
        named
        == [list(lib.lookup.search_all(q).named) for q in stories]
        == [["tcg-taikai"], ["ijinden"], [], []]
    )


def test_offline_lookup_finds_a_storys_words_as_the_server(app, offline_phone, live_server, tmp_path):
    """The browser offline finds a story's words as the server's lookup does (tune21): a word through its
    dictionary group, a key of the synonym list written in hiragana, no verb inside a kanji word it cannot
    read; and ranks an answer holding one of the story's words alone lower (lookup pass 16's ONE_WORD). The
    offline lookup page at a phone's size in dark mode, with the story the server answers."""
    phone = offline_phone
    lib = app.extensions["judgeapp.library"]
    phone.context.set_offline(True)
    phone.emulate_media(color_scheme="dark")
    phone.goto(live_server + "/wizard/lookup")
    phone.wait_for_function("window.judgeappOffline")
    # アタック through its dictionary group where ijinden's text says 攻撃, うそ (a key of the synonym list written
    # in hiragana) inside the story's hiragana; 避難した is 避難, which no text has, not 避 and 難い; and nothing
    # fits for neither story the server answers.
    read = [
        ("見てるお兄ちゃんががんばれーじゃなくてそこアタックって言っちゃった", "ijinden"),
        ("中学生なのに小学生ってうそついて子供の部に出てた", "tcg-taikai"),
        ("避難した", "tcg-taikai"),
    ]
    cov = phone.evaluate(
        """async (cases) => {
        const ix = await judgeappOffline.load('situations');
        return cases.map(c => [ix.storyCoverage(ix.readStory(c[0], c[1]))[c[1]], !!ix.search(c[0], c[1], 8).none]);
    }""",
        read,
    )
    assert [c["found"] for c, _ in cov] == [2, 2, 0]
    assert [none for _, none in cov] == [lib.lookup.search(q, game=g).none for q, g in read[:2]] + [True]
    # An answer that holds one of the story's words alone weighs ONE_WORD in the ranking, as on the server
    # (lookup pass 16): the story's everyday 見る does not put 覗き見 first (without the rule it does).
    q = "対戦中のプレイヤーが見てる先輩にこれ攻撃していいですかって聞いちゃった"
    ranked = phone.evaluate(
        """async (q) => {
        const ix = await judgeappOffline.load('situations'), first = () => ix.search(q, 'ijinden', 8).hits[0].id;
        const with_rule = first(), w = ix.data.none.one_word;
        ix.data.none.one_word = 1;
        const without = first();
        ix.data.none.one_word = w;
        return [with_rule, without];
    }""",
        q,
    )
    assert ranked == [first_answer(lib.lookup, q, "ijinden"), "ijinden/peeking"]
    assert ranked[0] == "ijinden/asking-spectator-advice"
    # the page: the story answered offline, the server's answer listed (the offline ranking, which has no
    # dictionary groups, puts it fourth: docs/offline.md)
    q, g = read[0]
    phone.goto(live_server + f"/wizard/{g}?" + urlencode({"q": q}))
    phone.wait_for_selector("#offline-lookup ol.results li")
    assert phone.locator("#offline-banner").is_visible()
    assert phone.locator("#offline-lookup p.empty").count() == 0
    titles = phone.locator("#offline-lookup ol.results a.title").all_inner_texts()
    assert lib.lookup.search(q, game=g).matches[0].answer.infraction.name in titles
    phone.screenshot(path=str(tmp_path / "offline-story-words-dark.png"))


def test_record_offline_lands_exactly_once(app, phone, switchable, tmp_path):
    live_server = switchable.url
    record_url = kept_record_page(app, phone, live_server)
    cut(phone, switchable)
    phone.goto(live_server + record_url)
    confirm_record(phone, "2", "開始から 7 分後に着席")
    phone.wait_for_selector("#record-queue >> text=未送信")
    phone.screenshot(path=str(tmp_path / "queued.png"), full_page=True)
    # A closed tab loses nothing: the record is still there on the next (offline) page.
    phone.goto(live_server + "/")
    assert "未送信" in phone.locator("#record-queue").inner_text()
    assert penalties(app) == []
    # The kept form's check token may be an older session's: the queue sends the session's current one.
    phone.evaluate("""() => { const q = JSON.parse(localStorage.getItem('judgeapp.queue'));
        q.forEach(x => x.fields.forEach(f => { if (f[0] === 'csrf_token') f[1] = 'stale'; }));
        localStorage.setItem('judgeapp.queue', JSON.stringify(q)); }""")
    restore(phone, switchable)
    phone.wait_for_function("!document.getElementById('record-queue')", timeout=30_000)
    assert len(penalties(app)) == 1
    phone.reload()
    phone.wait_for_timeout(500)
    assert len(penalties(app)) == 1
    assert penalties(app)[0].facts == "開始から 7 分後に着席"
    # A record the server refuses when it lands is shown with the reason and kept.
    cut(phone, switchable)
    phone.goto(live_server + record_url)
    confirm_record(phone, "99", "存在しないラウンド")
    phone.wait_for_selector("#record-queue >> text=未送信")
    restore(phone, switchable)
    phone.goto(live_server + "/")
    phone.wait_for_selector("#record-queue >> text=送信できませんでした")
    assert "ラウンド" in phone.locator("#record-queue [role=alert]").inner_text()
    phone.reload()
    assert "存在しないラウンド" in phone.locator("#record-queue").inner_text()
    assert len(penalties(app)) == 1


def test_offline_record_page_on_a_phone(app, phone, switchable, tmp_path):
    """The kept record form at 390×844, light and dark, at a venue whose Wi-Fi is up but the server out of
    reach (the phone says it is online): the banner sits right above the header, no gap; a confirmed record
    says it is kept as 未送信, never 「送信しています…」 for a send that cannot land."""
    base = switchable.url
    record_url = kept_record_page(app, phone, base)
    switchable.stop()  # the server out of reach; navigator.onLine stays true
    for scheme in ("light", "dark"):
        phone.emulate_media(color_scheme=scheme)
        phone.goto(base + record_url)
        phone.locator("#offline-banner").wait_for(state="visible")  # (a loaded machine lays it out late)
        banner = phone.locator("#offline-banner").bounding_box()
        header = phone.locator("header.top").bounding_box()
        assert (
            banner and header and banner["y"] == 0 and abs(header["y"] - (banner["y"] + banner["height"])) < 1
        ), (banner, header)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        phone.screenshot(path=str(tmp_path / f"record-offline-{scheme}.png"))
        phone.fill("input[name=round]", "2")
        phone.select_option("select[name=level]", index=1)
        phone.fill("textarea[name=facts]", f"開始から 7 分後に着席（{scheme}）")
        phone.click("button[value=preview]")
        phone.click("button[name=action][value=confirm]")
        phone.wait_for_selector("#record-queue >> text=未送信")
        # the kept records' box starts right under the search bar, no blank band above it
        # (read in one step in the page: the kept box is drawn again as the queue settles)
        bar, kept = phone.wait_for_function(
            """() => {
            const h = document.querySelector("#record-queue h2"), f = document.querySelector("form.topsearch");
            if (!h || !f || !h.offsetParent) return null;
            const a = f.getBoundingClientRect(), b = h.getBoundingClientRect();
            return [{y: a.y, height: a.height}, {y: b.y, height: b.height}];
        }"""
        ).json_value()
        assert bar and kept and kept["y"] - (bar["y"] + bar["height"]) <= 24, (bar, kept)
        note = phone.locator("main p.notice[role=status]")
        phone.wait_for_function(
            "() => !document.querySelector('main p.notice[role=status]').textContent.includes('送信しています')",
            timeout=15_000,
        )
        assert "未送信" in note.inner_text()
        assert phone.locator("main a.button", has_text="別の選手に記録する").is_visible()
        phone.screenshot(path=str(tmp_path / f"record-queued-{scheme}.png"), full_page=True)
    switchable.start()
    phone.reload()  # a page load sends the queue (as the next page the judge opens would)
    phone.locator("#record-queue").wait_for(state="detached", timeout=60_000)
    assert len(penalties(app)) == 2


def test_a_record_the_server_refuses_online_is_not_told_as_kept_to_send(app, phone, switchable):
    """Online, a confirmed record the server refuses (a round out of range sent after the preview) is shown
    as 送信できませんでした with the reason; the note where 送信しています… was says it was refused, not that
    it never reached the server and will be sent by itself (it will not: it waits for the judge)."""
    base = switchable.url
    event_id = make_event(phone, base, [("001", "山田太郎")])
    from sqlalchemy import select

    from judgeapp.events.models import Player

    with app.extensions["judgeapp.db"].reader() as s:
        pid = s.scalars(select(Player)).one().id
    phone.goto(base + f"/events/{event_id}/record?player={pid}")
    phone.fill("input[name=round]", "2")
    phone.select_option("select[name=level]", index=1)
    phone.fill("textarea[name=facts]", "開始から 7 分後に着席")
    phone.click("button[value=preview]")
    # the preview page, loaded (the click returns once the form is sent, not once its answer is shown)
    phone.wait_for_selector("button[name=action][value=confirm]")
    phone.evaluate("() => { document.querySelector('main form [name=round]').value = '99'; }")
    phone.click("button[name=action][value=confirm]")
    phone.wait_for_selector("#record-queue >> text=送信できませんでした")
    note = phone.locator("main p.notice[role=status]").inner_text()
    assert "受け付けませんでした" in note, note
    assert "届きませんでした" not in note and "自動で送ります" not in note, note
    assert penalties(app) == []


def luminance(rgb: str) -> float:
    vals = [int(x) / 255 for x in re.findall(r"\d+", rgb)[:3]]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in vals]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted([luminance(a), luminance(b)], reverse=True)
    return (la + 0.05) / (lb + 0.05)


COLORS = """() => { const bg = getComputedStyle(document.body).backgroundColor;
  const pick = s => { const e = document.querySelector(s); return e ? getComputedStyle(e).color : null; };
  return {bg, fg: getComputedStyle(document.body).color, link: pick('main a'), muted: pick('footer'),
          button: pick('main button'), buttonBg: (document.querySelector('main button') ?
            getComputedStyle(document.querySelector('main button')).backgroundColor : null)}; }"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_dark_mode_follows_the_phone_and_the_toggle_is_remembered(chromium, live_server, scheme, tmp_path):
    context = chromium.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, locale="ja-JP", color_scheme=scheme
    )
    page = context.new_page()
    page.goto(live_server + "/")
    c = page.evaluate(COLORS)
    dark = luminance(c["bg"]) < 0.1
    assert dark == (scheme == "dark")
    for key in ("fg", "link", "muted"):
        assert contrast(c[key], c["bg"]) >= 4.5, (key, c)
    assert contrast(c["button"], c["buttonBg"]) >= 4.5
    page.screenshot(path=str(tmp_path / f"home-{scheme}.png"))
    page.click("#theme-toggle")
    page.reload()
    c2 = page.evaluate(COLORS)
    assert (luminance(c2["bg"]) < 0.1) != dark  # the other theme, remembered across a reload
    for key in ("fg", "link", "muted"):
        assert contrast(c2[key], c2["bg"]) >= 4.5, (key, c2)
    context.close()


def test_compression_and_caching_headers_in_the_browser(phone, live_server):
    seen = {}
    phone.on("response", lambda r: seen.setdefault(r.url.replace(live_server, ""), r))
    phone.goto(live_server + "/rules/lycee/guideline/tardiness")
    page = seen["/rules/lycee/guideline/tardiness"].all_headers()
    assert page["content-encoding"] in ("br", "gzip")
    assert "no-cache" in page["cache-control"] and page.get("etag")
    css = next(r for u, r in seen.items() if re.fullmatch(r"/static/app\.[0-9a-f]{12}\.css", u)).all_headers()
    assert css["content-encoding"] in ("br", "gzip")
    assert "max-age=31536000" in css["cache-control"] and "immutable" in css["cache-control"]
    # A revisit revalidates the page with its ETag and gets a 304 (checked without the worker in between).
    status = phone.evaluate("""async () => { const r = await fetch(location.href, {cache: 'no-store'});
        const r2 = await fetch(location.href,
                               {headers: {'If-None-Match': r.headers.get('ETag')}, cache: 'no-store'});
        return r2.status; }""")
    assert status == 304
    fav = phone.request.get(live_server + "/favicon.ico")
    assert fav.status == 200 and fav.headers["content-type"] == "image/png"


PAGES = ["/", "/search?q=遅刻", "/rules/lycee/guideline/tardiness", "/wizard/lycee/late-seat", "/decks"]


def test_tap_targets_and_axe(app, phone, live_server):
    event_id = make_event(phone, live_server, [("001", "山田太郎")])
    pages = PAGES + [f"/events/{event_id}", f"/events/{event_id}/players/1"]
    axe = AXE.read_text(encoding="utf-8")
    for url in pages:
        phone.goto(live_server + url)
        small = phone.evaluate("""() => [
              ...document.querySelectorAll('a[href], button, input, select, summary')]
            .filter(e => e.offsetParent !== null)
            .filter(e => !e.closest('.body p, .body li, .body td, p.snippet, footer, .skip'))
            .filter(e => e.type !== 'hidden' && e.getBoundingClientRect().height < 44)
            .map(e => e.outerHTML.slice(0, 80))""")
        assert not small, (url, small[:5])
        # Through the DevTools protocol: the page's own CSP (no inline script) rightly refuses a script tag.
        phone.evaluate(axe + "\n;true")
        found = phone.evaluate("""() => axe.run(document, {resultTypes: ['violations']}).then(r =>
            r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
             .map(v => v.id + ': ' + v.nodes.slice(0, 2).map(n => n.target.join(' ')).join(', ')))""")
        assert not found, (url, found)


def test_opened_result_highlights_the_words_and_copy_link_falls_back(phone, live_server):
    phone.goto(live_server + "/search?q=" + "遅刻" + "&game=lycee")
    phone.click("main ol.results a.title[href='/rules/lycee/guideline/tardiness']")
    phone.wait_for_url("**/rules/lycee/guideline/tardiness")
    marks = phone.locator("main .body mark")
    assert marks.count() >= 1 and "遅刻" in marks.first.inner_text()
    # Opened directly (not from a search) the section has no highlight.
    phone.goto(live_server + "/rules/lycee/guideline/promo-cards")
    assert phone.locator("main .body mark").count() == 0
    # Copy-link: the clipboard, else the share sheet, else the URL selected for a long press.
    phone.click("button[data-copy]")
    phone.wait_for_function("document.querySelector('button[data-copy]').textContent !== 'リンクをコピー'")
    label = phone.locator("button[data-copy]").inner_text()
    selected = phone.evaluate(
        "document.activeElement.id === 'permalink' && document.activeElement.selectionEnd > 0"
    )
    assert label == "コピーしました" or (label.startswith("選択しました") and selected)


def test_background_sync_sends_the_queue_with_no_page_open(app, phone, switchable):
    """Queued offline, the tab left: the worker sends the record on Background Sync; the next page says so."""
    base = switchable.url
    event_id = make_event(phone, base, [("001", "山田太郎")])
    phone.goto(base + f"/events/{event_id}")
    phone.evaluate("navigator.serviceWorker.ready")
    wait_ready(phone)
    record_url = f"/events/{event_id}/record?player=1"
    wait_event_kept(phone, record_url)
    cdp = phone.context.new_cdp_session(phone)
    registrations: list[dict] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: registrations.extend(e["registrations"]))
    cdp.send("ServiceWorker.enable")
    cut(phone, switchable)
    phone.goto(base + record_url)
    confirm_record(phone, "3", "タブを閉じた後に届く記録")
    phone.wait_for_selector("#record-queue >> text=未送信")
    phone.wait_for_function("judgeappStore.get('queue').then(q => q && q.length === 1)")
    phone.goto("about:blank")  # no page of the app is open any more
    switchable.start()
    phone.context.set_offline(False)
    reg = next(r for r in registrations if r["scopeURL"].startswith(base))
    cdp.send(
        "ServiceWorker.dispatchSyncEvent",
        {"origin": base, "registrationId": reg["registrationId"], "tag": "record-queue", "lastChance": False},
    )
    for _ in range(100):
        if penalties(app):
            break
        phone.wait_for_timeout(100)
    assert [p.facts for p in penalties(app)] == ["タブを閉じた後に届く記録"]
    phone.goto(base + "/")
    phone.wait_for_selector("text=保存していた記録を送信しました")
    assert phone.locator("#record-queue").count() == 0
    phone.wait_for_timeout(500)
    assert len(penalties(app)) == 1


def test_training_runs_offline(app, offline_phone, live_server, tmp_path):
    """With no signal a judge still practises: a kept run of ten, each answer's feedback, the score."""
    from judgeapp.wizard.routes import choices, expected

    phone = offline_phone
    policy = app.extensions["judgeapp.library"].policies.games["lycee"]
    scenarios = {s.id: s for s in policy.training.scenarios}
    first_choice = choices(policy)[0]
    cut_to = phone.context
    cut_to.set_offline(True)
    phone.goto(live_server + "/training/lycee")
    phone.click("text=始める")
    phone.wait_for_url("**/training/lycee?run=*")
    run = re.search(r"run=([^&]+)", phone.url).group(1).replace("%2C", ",").split(",")
    assert len(run) == min(10, len(scenarios)) and set(run) <= set(scenarios)
    for _i, sid in enumerate(run):
        assert phone.locator("h1.situation").inner_text() == scenarios[sid].situation
        phone.click(f"ul.answers a >> text={first_choice[1]}")
        right = expected(policy, scenarios[sid]) == first_choice[0]
        assert phone.locator("p.result").inner_text() == ("正解" if right else "不正解")
        phone.locator("main a.button").click()
    score = sum(1 for sid in run if expected(policy, scenarios[sid]) == first_choice[0])
    assert phone.locator("h1").inner_text() == f"{len(run)} 問中 {score} 問正解"
    assert phone.locator("#offline-banner").is_visible()
    if score < len(run):
        assert phone.locator("ol.results li").count() == len(run) - score
    phone.screenshot(path=str(tmp_path / "training-summary.png"), full_page=True)
