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


SUSPENSIONS = {"suspension-1y": "tcg-taikai/floor-rules/3b-i",
               "suspension-3y": "tcg-taikai/floor-rules/3b-ii",
               "suspension-5y": "tcg-taikai/floor-rules/3b-iii"}


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
    """2g: a 一般 tournament need not have a head judge; 2h: appeals exist where there is one."""
    assert "一般トーナメントではヘッドジャッジがいる義務はありません" in corpus.sections["tcg-taikai/floor-rules/2g"].text
    html = _text(client.get("/wizard/tcg-taikai/counterfeit-card").get_data(as_text=True))
    assert "フロアジャッジの決定が最終の決定" in html
    assert "一般トーナメント" in html
    # Other games keep the plain hand-off.
    html = _text(client.get("/wizard/lycee").get_data(as_text=True))
    assert "フロアジャッジの決定が最終" not in html


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
    assert "格上げできます" in html and "大会主催者と、主催者から【敗北】を与えることが許可されたジャッジのみ" in html


def test_ijinden_disqualification_ends_the_current_game(policies, corpus):
    assert "現在のゲームに敗北し" in corpus.sections["ijinden/floor-rules/ch10-4"].text
    assert policies.games["ijinden"].levels["disqualification"].ends_game


# --- silent entries, remedies, training ----------------------------------------------------------------

SILENT = ["dm-senshu/play-draw", "dm-senshu/pregame-procedure", "dm-senshu/shield-placement",
          "dm-senshu/shield-trigger-late", "tcg-taikai/unclear-play"]


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
