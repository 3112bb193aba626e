"""Fidelity of the infraction data to the texts (issue 10, point 4): each correction found in a line-by-line
review of infractions/ against the texts, checked against the corpus's own words."""

from __future__ import annotations

import re

import pytest

from judgeapp import ROOT
from judgeapp.corpus import load_corpus
from judgeapp.policy import load_policies, standing
from judgeapp.textnorm import squash

from .test_events import add_player, add_staff, make_event, record


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(ROOT / "rules_corpus")


@pytest.fixture(scope="module")
def policies(corpus):
    return load_policies(ROOT / "infractions", corpus)


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


SUSPENSIONS = {
    "suspension-1y": "tcg-taikai/floor-rules/3b-i",
    "suspension-3y": "tcg-taikai/floor-rules/3b-ii",
    "suspension-5y": "tcg-taikai/floor-rules/3b-iii",
}


# --- tcg-taikai 出場停止 (3a, 3b) --------------------------------------------------------------------------


def test_tcg_suspension_does_not_remove_from_the_current_tournament(policies, client):
    """3a: the official 「出場停止処分にすることができます」, from when it is applied: nothing removes the player."""
    tcg = policies.games["tcg-taikai"]
    for cid in SUSPENSIONS:
        item = tcg.consequences[cid]
        assert not item.removes, cid
        assert not standing(tcg, [item.label]).removed
    html = _text(client.get("/wizard/tcg-taikai/theft").get_data(as_text=True))
    assert "除外されます" not in html


def test_removal_wording_comes_from_each_policy_not_templates(policies):
    """「トーナメントから除外されます」 is Lycee's wording: no template says it; each policy's data does."""
    for path in (ROOT / "templates").rglob("*.html"):
        assert "トーナメントから除外" not in path.read_text(encoding="utf-8"), path
    lycee = policies.games["lycee"]
    assert "除外" in standing(lycee, ["警告", "警告"]).removed_text
    ijinden = policies.games["ijinden"]
    assert "除外" not in standing(ijinden, ["失格"]).removed_text


def test_tcg_suspensions_only_where_3b_names_the_conduct(policies, corpus):
    """Every infraction mapped to a suspension quotes an item of that category's list in 3b; rude language
    (2b), which 3b-i does not name, is not mapped to one."""
    tcg = policies.games["tcg-taikai"]
    for inf in tcg.infractions.values():
        if inf.penalty not in SUSPENSIONS:
            continue
        section = corpus.sections[SUSPENSIONS[inf.penalty]]
        items = {squash(line) for line in section.text.splitlines() if line.strip()}
        assert any(c.section == section.id and squash(c.quote) in items for c in inf.citations), inf.id
        assert inf.discretion, inf.id
    assert tcg.infractions["unsporting-conduct"].penalty is None


def test_tcg_suspension_says_categories_factors_and_that_it_may_be_issued(policies, client, corpus):
    """What the text gives: its categories, the factors (重大性, 協力意欲, 違反履歴), and that issuing it and its
    length are the official's (「できます」, 「適切であると認めた期間」)."""
    tcg = policies.games["tcg-taikai"]
    assert "違反の重大性" in corpus.sections["tcg-taikai/floor-rules/3a"].text
    for cid, sid in SUSPENSIONS.items():
        desc = tcg.consequences[cid].description
        for word in ("重大性", "協力意欲", "違反履歴", "できます", "適切であると認めた期間"):
            assert word in desc, (cid, word)
        for line in corpus.sections[sid].text.splitlines():
            if line.strip():
                assert line.strip().split(" : ")[0] in desc, (cid, line)
    html = _text(client.get("/wizard/tcg-taikai/theft").get_data(as_text=True))
    assert "適切であると認めた期間" in html and "協力意欲" in html


def test_tcg_without_a_head_judge_the_floor_judge_decides(policies, client, corpus):
    """2g: the floor judge decides first, the head judge only on appeal; 2h: in a 一般 tournament without a head
    judge the floor judge's decision is final. The hand-off quotes those sentences, not the appeal one."""
    g, h = (
        corpus.sections["tcg-taikai/floor-rules/2g"].text,
        corpus.sections["tcg-taikai/floor-rules/2h"].text,
    )
    assert "フロアジャッジの決定後に上告があった場合のみヘッドジャッジは決定を行います" in g
    assert "ヘッドジャッジがいない一般トーナメントの場合フロアジャッジの決定は最終決定であり覆りません" in h
    html = _text(client.get("/wizard/tcg-taikai/counterfeit-card").get_data(as_text=True))
    assert "まずフロアジャッジが決定します" in html and "上告があった場合だけ" in html
    assert "フロアジャッジの決定が最終決定であり覆りません" in html
    quotes = [squash(c.quote) for c in policies.games["tcg-taikai"].hand_off.citations]
    assert (
        squash("ヘッドジャッジがいない一般トーナメントの場合フロアジャッジの決定は最終決定であり覆りません")
        in quotes
    )
    # Other games keep the plain hand-off.
    html = _text(client.get("/wizard/lycee").get_data(as_text=True))
    assert "フロアジャッジの決定が最終" not in html


def test_tcg_notes_do_not_send_every_case_to_the_head_judge(policies, client):
    """2g: the head judge decides only on appeal, so no tcg-taikai note, training reasoning or deck page says
    「ヘッドジャッジが判断します」 unconditionally (what 2g gives the head judge, removing a player, stays his)."""
    tcg = policies.games["tcg-taikai"]
    for inf in tcg.infractions.values():
        note = inf.discretion_note or ""
        if "ヘッドジャッジが判断します" in note:
            assert "退出させる" in note or "離れさせる" in note, inf.id
    for sc in tcg.training.scenarios:
        assert "ヘッドジャッジが判断" not in sc.reasoning, sc.id
    html = _text(client.get("/decks", query_string={"game": "tcg-taikai"}).get_data(as_text=True))
    assert "ヘッドジャッジが判断します" not in html and "ジャッジが判断します" in html
    html = _text(
        client.get("/training/tcg-taikai", query_string={"run": tcg.training.scenarios[0].id}).get_data(
            as_text=True
        )
    )
    assert "規定なし（ジャッジの判断）" in html and "ヘッドジャッジの判断" not in html


TCG_SUSPENDABLE = [
    "cheating",
    "ignoring-official",
    "obstructing-investigation",
    "suspended-visit",
    "misrepresentation",
    "serious-misrepresentation",
    "theft",
    "harassment",
    "violence",
    "serious-violence",
    "vandalism",
]


@pytest.mark.parametrize("iid", TCG_SUSPENDABLE)
def test_tcg_suspension_is_shown_and_returned_as_may(client, corpus, iid):
    """3b: 「…出場停止処分を発行することができます」: the suspension is the penalty only as something the official
    may issue: the page says 「できます」 beside it, the API says so and flags discretion."""
    assert "出場停止処分を発行することができます" in corpus.sections["tcg-taikai/floor-rules/3b"].text
    page = client.get(f"/wizard/tcg-taikai/{iid}").get_data(as_text=True)
    verdict = _text(page.split('<section class="verdict', 1)[1].split("</section>", 1)[0])
    assert (
        "出場停止" in verdict
        and "発行することができます" in verdict
        and "必ず与えるペナルティではありません" in verdict
    )
    body = client.get(f"/api/infractions/tcg-taikai/{iid}").get_json()
    assert (
        body["penalty"].startswith("出場停止") and body["discretion"] is True and body["head_judge"] is True
    )
    assert "できます" in body["penalty_may"]


def test_tcg_lookup_badge_says_a_suspension_may_be_issued(client):
    html = _text(
        client.get("/wizard/lookup", query_string={"game": "tcg-taikai", "q": "カードを盗んだ"}).get_data(
            as_text=True
        )
    )
    assert "出場停止（3年）（できます）" in html
    body = client.get(
        "/api/infractions", query_string={"game": "tcg-taikai", "q": "カードを盗んだ"}
    ).get_json()
    hit = next(r for r in body["results"] if r["penalty_id"] == "suspension-3y")
    assert hit["discretion"] is True and "できます" in hit["penalty_may"]


def test_tcg_disqualification_says_nothing_after_it(client, corpus):
    """3a has only 「トーナメントを失格になるペナルティ」: what follows is not written."""
    assert "以後のマッチ" not in corpus.sections["tcg-taikai/floor-rules/3a"].text
    body = client.post("/api/policies/tcg-taikai/standing", json={"penalties": ["失格"]}).get_json()
    assert body["removed"] and "以後のマッチ" not in body["removed_text"]
    assert "その後の扱いは書かれていません" in body["removed_text"]


def test_tcg_suspension_pages_use_the_texts_word_for_removal(client, corpus):
    """除外 is Lycee's word; this text says 退出させ (2g)."""
    assert "除外" not in corpus.sections["tcg-taikai/floor-rules/2g"].text
    for iid in ("theft", "ignoring-official", "serious-violence"):
        html = _text(client.get(f"/wizard/tcg-taikai/{iid}").get_data(as_text=True))
        assert "除外" not in html, iid
        assert "退出させるとは書かれていません" in html, iid


def test_tcg_rude_language_is_not_named_after_a_3b_category(client, corpus):
    """2b: 「冒涜的および相手を不快にさせる言動を行わないこと」; 反スポーツマンシップ行為 is 3b-i's category."""
    assert "反スポーツマンシップ行為" in corpus.sections["tcg-taikai/floor-rules/3b-i"].text
    body = client.get("/api/infractions/tcg-taikai/unsporting-conduct").get_json()
    assert "反スポーツマンシップ行為" not in body["description"] and "（2b）" in body["description"]


@pytest.mark.parametrize("iid", ["missing-sideboard-card-casual", "missing-sideboard-card-competitive"])
def test_tcg_sideboard_card_hands_the_case_over_and_adds_no_deck_card_loss(client, policies, iid):
    """7e gives the player a choice and no penalty; for a sideboard card it says only 「上記と同様に敗北を
    選択する」, so the deck card's game-loss text is not shown."""
    tcg = policies.games["tcg-taikai"]
    html = _text(client.get(f"/wizard/tcg-taikai/{iid}").get_data(as_text=True))
    assert tcg.hand_off.text in html
    assert tcg.consequences["game-loss"].description not in html
    assert client.get(f"/api/infractions/tcg-taikai/{iid}").get_json()["head_judge"] is True


@pytest.mark.parametrize("full_id", ["dm-senshu/time-out", "ijinden/time-limit"])
def test_time_limit_entries_say_the_rest_is_the_judges(client, policies, full_id):
    """Where the text does not say how (後攻 in dm-senshu 205; the end time in ijinden ch7), the case is open."""
    policy, inf = policies.infraction(full_id)
    body = client.get(f"/api/infractions/{full_id}").get_json()
    assert body["discretion"] is True and body["head_judge"] is True
    html = _text(client.get(f"/wizard/{full_id}").get_data(as_text=True))
    assert policy.hand_off.text in html


@pytest.mark.parametrize(
    "iid, category",
    [
        ("misrepresentation", "3b-ii（期間 3 年）のカテゴリ"),
        ("violence", "3b-iii（期間 5 年以上）のカテゴリ"),
    ],
)
def test_tcg_serious_forms_are_categories_not_fixed_terms(client, corpus, iid, category):
    """3b: 「適切であると認めた期間の出場停止処分を発行することができます」: no term follows by itself."""
    assert "適切であると認めた期間" in corpus.sections["tcg-taikai/floor-rules/3b"].text
    note = client.get(f"/api/infractions/tcg-taikai/{iid}").get_json()["discretion_note"]
    assert category in note and "なら 3 年です" not in note and "なら 5 年以上です" not in note


# --- lycee, ijinden: 投了, 合意による引き分け, results ---------------------------------------------------------


def test_lycee_game_loss_does_not_carry_the_concession_rule(client):
    """The penalty list quotes 「ゲームでの敗北」; the 2本先取 sentence belongs to 投了."""
    body = client.get("/api/policies/lycee").get_json()
    gl = next(c for c in body["consequences"] if c["id"] == "game-loss")
    assert "試合は続きます" not in gl["description"] and gl["citations"] == ["lycee/guideline/penalty"]


def test_lycee_concession_cites_that_it_is_the_players_wish(client, corpus):
    quote = "ゲーム中、プレイヤーが望めばそのゲームを「投了」することができます。"
    assert quote in corpus.sections["lycee/guideline/concession"].text
    body = client.get("/api/infractions/lycee/concession").get_json()
    assert {"section": "lycee/guideline/concession", "quote": quote} in body["quotes"]


def test_lycee_late_draw_says_only_that_it_cannot_be_declared(client, policies):
    """The text says only 「「合意による引き分け」を宣言することはできません」, not that the match goes on."""
    html = _text(client.get("/wizard/lycee/intentional-draw-late").get_data(as_text=True))
    assert "合意による引き分けにはできません" in html and "試合を続けさせます" not in html
    sc = next(s for s in policies.games["lycee"].training.scenarios if s.id == "lycee-id-between-games")
    assert "試合は続けます" not in sc.reasoning


def test_ijinden_result_fix_is_open_to_the_judge(client):
    """Whether to penalise is the judge's (第10章): discretion true, and the open answer is right in training."""
    assert client.get("/api/infractions/ijinden/result-after-confirmation").get_json()["discretion"] is True
    for a in ("no-penalty", "none"):
        html = client.get("/training/ijinden", query_string={"run": "ijinden-result-fix", "a": a}).get_data(
            as_text=True
        )
        assert "正解" in html and "不正解" not in html, a


def test_lycee_withdrawal_is_a_result_not_a_penalty(client):
    """棄権扱い after a drop or 30 minutes late is what the text says happens, not a penalty to record."""
    body = client.get("/api/policies/lycee").get_json()
    assert next(c for c in body["consequences"] if c["id"] == "withdrawal")["result"] is True
    resp = client.post("/api/policies/lycee/standing", json={"penalties": ["棄権扱い", "注意"]})
    assert resp.get_json()["counts"] == {"注意": 1}


def test_lycee_withdrawal_cannot_be_recorded(client):
    org = make_event(client, game="lycee")
    fj = add_staff(org, "FJ", "floor_judge")
    player = add_player(org)
    resp = record(fj, player, "棄権扱い")
    assert resp.status_code == 400
    assert fj.get(f"/players/{player}").get_json()["records"] == []


# --- results that are not penalties --------------------------------------------------------------------


def test_concession_and_forfeit_are_results_not_penalties(policies, client):
    lycee, ijinden = policies.games["lycee"], policies.games["ijinden"]
    assert lycee.infractions["concession"].penalty is None and lycee.infractions["concession"].procedure
    assert ijinden.infractions["drop-after-pairing"].penalty is None
    assert ijinden.consequences["forfeit"].result
    s = standing(ijinden, ["不戦敗"])
    assert s.counts == {} and not s.removed
    resp = client.post("/api/policies/ijinden/standing", json={"penalties": ["不戦敗", "注意"]})
    assert resp.get_json()["counts"] == {"注意": 1}


def test_a_forfeit_cannot_be_recorded(client):
    org = make_event(client, game="ijinden")
    fj = add_staff(org, "FJ", "floor_judge")
    player = add_player(org)
    resp = record(fj, player, "不戦敗")
    assert resp.status_code == 400 and "不戦敗" not in resp.get_json()["error"]["message"]
    assert fj.get(f"/players/{player}").get_json()["records"] == []


# --- ijinden -------------------------------------------------------------------------------------------


def test_ijinden_upgrades_have_no_invented_count(policies, corpus):
    """「何度も」 with no number: the offer comes with the earlier records, and to 【敗北】 says who may issue it."""
    assert "何度も【注意】を受けた場合" in corpus.sections["ijinden/floor-rules/ch10-1"].text
    ijinden = policies.games["ijinden"]
    for rule in ijinden.file.rules:
        if rule.kind == "upgrade":
            assert rule.count is None, rule.id
    s = standing(ijinden, ["注意", "注意", "注意"])
    step = s.steps[-1]
    assert step.upgrades and step.upgrades[0]["earlier"] == 2
    assert "2 回" in " ".join(step.notes) and "回目から格上げ" not in " ".join(step.notes)
    s = standing(ijinden, ["警告", "警告"])
    note = " ".join(s.steps[-1].notes)
    assert ijinden.levels["defeat"].restricted_to in note
    assert s.steps[-1].upgrades[0]["restricted_to"] == {"敗北": ijinden.levels["defeat"].restricted_to}


def test_ijinden_upgrade_offer_on_the_outcome_page_says_who_may_issue_defeat(client, policies):
    resp = client.get("/wizard/ijinden/insulting", query_string={"prior.warning": 1})
    html = _text(resp.get_data(as_text=True))
    assert (
        "格上げできます" in html
        and "大会主催者と、主催者から【敗北】を与えることが許可されたジャッジのみ" in html
    )


def test_ijinden_disqualification_ends_the_current_game(policies, corpus):
    assert "現在のゲームに敗北し" in corpus.sections["ijinden/floor-rules/ch10-4"].text
    assert policies.games["ijinden"].levels["disqualification"].ends_game


# --- silent entries, remedies, training ----------------------------------------------------------------

SILENT = [
    "dm-senshu/play-draw",
    "dm-senshu/pregame-procedure",
    "dm-senshu/shield-placement",
    "dm-senshu/shield-trigger-late",
    "tcg-taikai/unclear-play",
]


@pytest.mark.parametrize("full_id", SILENT)
def test_silent_entries_hand_the_case_to_the_head_judge(policies, client, full_id):
    policy, inf = policies.infraction(full_id)
    assert inf.penalty is None and inf.head_judge
    html = _text(client.get(f"/wizard/{full_id}").get_data(as_text=True))
    assert policy.hand_off.text in html


def test_remedies_keep_the_texts_may(policies, corpus):
    """ijinden ch5: marked cards 「使用できない場合があります」 is not a rule that they are refused."""
    assert "ジャッジの判断により使用できない場合があります" in corpus.sections["ijinden/floor-rules/ch5"].text
    remedy = policies.games["ijinden"].infractions["marked-cards"].remedy
    assert "使用させません" not in remedy and "場合があります" in remedy


def test_no_match_loss_for_a_sideboard_card(policies):
    """tcg-taikai 7e: the match loss after 5 minutes is written for a deck card, not for a sideboard card."""
    inf = policies.games["tcg-taikai"].infractions["missing-sideboard-card-competitive"]
    assert "match-loss" not in inf.also_consequences
    assert not any("マッチの敗北です" in x for x in inf.also)


def test_training_answers_are_never_more_definite_than_the_text(policies):
    from judgeapp.wizard.routes import accepted, expected

    tcg = policies.games["tcg-taikai"]
    for s in tcg.training.scenarios:
        if tcg.infractions[s.infraction].penalty in SUSPENSIONS:
            assert len(accepted(tcg, s)) > 1, s.id
    ijinden = policies.games["ijinden"]
    loud = next(s for s in ijinden.training.scenarios if s.id == "ijinden-loud-spectator")
    assert expected(ijinden, loud) == "caution"


def test_training_accepts_head_judge_for_a_discretionary_suspension(client, policies):
    tcg = policies.games["tcg-taikai"]
    sid = next(s.id for s in tcg.training.scenarios if tcg.infractions[s.infraction].penalty in SUSPENSIONS)
    html = client.get("/training/tcg-taikai", query_string={"run": sid, "a": "none"}).get_data(as_text=True)
    assert "正解" in html and "不正解" not in html


def test_dm_senshu_deck_page_says_the_text_is_an_unofficial_draft(client, corpus):
    assert "私家版ルール草案" in corpus.sections["dm-senshu/floor-rules/intro"].text
    html = _text(client.get("/decks", query_string={"game": "dm-senshu"}).get_data(as_text=True))
    assert "私家版" in html and "効力がありません" in html


def test_policies_are_read_with_the_c_loader():
    """Cold start: PyYAML's C loader, which gives the same documents as the safe loader."""
    import yaml

    from judgeapp import yamlload

    assert issubclass(yamlload.StrictLoader, yaml.CSafeLoader)
    path = ROOT / "infractions" / "tcg-taikai" / "policy.yaml"
    text = path.read_text(encoding="utf-8")
    assert yamlload.load_yaml(text) == yaml.safe_load(text)
