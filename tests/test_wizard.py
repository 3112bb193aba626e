"""Wizard, outcome, graph and training pages, and the infraction/policy API: contract, weight, bad input."""

from __future__ import annotations

import re

import pytest
from markupsafe import escape

from judgeapp.yamlload import load_yaml

from .conftest import GAMES, INFRACTIONS_DIRS, load_cases

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

PAGE_LIMIT = 30 * 1024
CASES = load_cases("wizard.yaml")


def raw_wizard(game: str) -> dict:
    """The game's wizard.yaml as written (not as judgeapp loads it)."""
    return next(load_yaml(d / game / "wizard.yaml") for d in INFRACTIONS_DIRS if (d / game).is_dir())


def path_to(policy, infraction_id: str) -> dict[str, str]:
    """The answers that lead from the start to an infraction (the first way the file's tree offers)."""
    nodes = raw_wizard(policy.game)["nodes"]
    parents: dict[str, tuple[str, str]] = {}
    outcome_at = None
    for node in nodes:
        for a in node["answers"]:
            if a.get("next"):
                parents.setdefault(a["next"], (node["id"], a["id"]))
            if a.get("outcome") == infraction_id and outcome_at is None:
                outcome_at = (node["id"], a["id"])
    assert outcome_at, f"{infraction_id} is no outcome of {policy.game}'s wizard.yaml"
    node_id, answer_id = outcome_at
    params = {node_id: answer_id}
    while node_id in parents:
        node_id, answer_id = parents[node_id]
        params[node_id] = answer_id
    return params


@pytest.mark.parametrize("game", GAMES)
def test_every_outcome_page_renders_with_its_citations(client, library, game):
    policy = library.policies.games[game]
    for inf in policy.infractions.values():
        params = path_to(policy, inf.id)
        resp = client.get(f"/wizard/{game}/{inf.id}", query_string=params)
        assert resp.status_code == 200, inf.id
        assert len(resp.data) < PAGE_LIMIT, (inf.id, len(resp.data))
        html = resp.get_data(as_text=True)
        for c in inf.citations:
            assert f'href="/rules/{c.section}"' in html
        # the quotes of one section under one heading: a section's title is not repeated for each quote
        cites = html.split('<ul class="cites">', 1)[1].split("</ul>", 1)[0]
        runs = [c for i, c in enumerate(inf.citations) if i == 0 or inf.citations[i - 1].section != c.section]
        assert cites.count("<li>") == len(runs), inf.id
        assert all(str(escape(c.quote)) in cites for c in inf.citations), inf.id
        if inf.penalty is None:
            assert (policy.penalty_text(inf) if inf.procedure else "規定なし") in html
        if inf.head_judge:  # who decides, in the policy's words (tcg-taikai: the floor judge first, 2g/2h)
            assert policy.hand_off.text in html and "ジャッジ" in policy.hand_off.text
        # The answers that led here are listed, each with a link to change it.
        assert html.count(">変更</a>") == len(params)


@pytest.mark.parametrize(
    ("game", "inf_id", "results"),
    [
        # 30 分以内に届け出がない: the text decides a drop; the match was lost at 5 minutes (named in the badge)
        ("lycee", "late-no-report", ["棄権扱い"]),
        ("ijinden", "drop-after-pairing", ["不戦敗", "大会からの棄権"]),
        ("lycee", "concession", []),  # 投了: the player's own choice, no result beside the game lost
    ],
)
def test_a_procedure_says_the_result_the_text_decides(client, library, game, inf_id, results):
    """ペナルティなし alone read as "nothing happens" where the text drops the player: the badge and the verdict
    name the result too, as a result and not a penalty, and any other consequence that follows."""
    policy = library.policies.games[game]
    inf = policy.infractions[inf_id]
    others = [
        policy.consequences[c].label for c in inf.also_consequences if not policy.consequences[c].result
    ]
    assert policy.penalty_text(inf) == "・".join(([] if others else ["ペナルティなし"]) + results + others)
    assert inf_id != "late-no-report" or policy.penalty_text(inf) == "棄権扱い・試合の敗北"
    html = client.get(f"/wizard/{game}/{inf_id}", query_string=path_to(policy, inf_id)).get_data(as_text=True)
    verdict = html.split('<section class="verdict', 1)[1].split("</section>", 1)[0]
    assert f'<p class="penalty">{policy.penalty_text(inf)}</p>' in verdict
    assert ("は本文が決める結果で、ペナルティではありません" in verdict) == bool(results)


@pytest.mark.parametrize("game", GAMES)
def test_every_question_page_is_small_and_answers_lead_on(client, library, game):
    policy = library.policies.games[game]
    resp = client.get(f"/wizard/{game}")
    assert resp.status_code == 200 and len(resp.data) < PAGE_LIMIT
    html = resp.get_data(as_text=True)
    start = policy.nodes[policy.wizard.start]
    assert start.question in html
    for a in start.answers:
        assert f"{start.id}={a.id}" in html


def test_state_is_in_the_query_string_and_back_keeps_answers(client, library):
    policy = library.policies.games["ijinden"]
    inf_id = next(iter(policy.infractions))
    params = path_to(policy, inf_id)
    # The question page with every answer given redirects to the outcome, so the link can be shared.
    resp = client.get("/wizard/ijinden", query_string=params)
    assert resp.status_code == 302 and f"/wizard/ijinden/{inf_id}" in resp.headers["Location"]
    # Back: the last question again, its earlier answer marked, the other answers still in the links.
    last_node = policy.parents[inf_id][0]
    resp = client.get("/wizard/ijinden", query_string={**params, "at": last_node})
    html = resp.get_data(as_text=True)
    assert policy.nodes[last_node].question in html
    assert 'class="current"' in html


def test_home_reaches_every_wizard_in_one_tap(client, library):
    html = client.get("/").get_data(as_text=True)
    for game in GAMES:
        assert f'href="/wizard/{game}"' in html
        assert library.policies.games[game].depth <= 3


def test_situation_lookup_on_the_first_page(client):
    html = client.get("/wizard/ijinden", query_string={"q": "カードを多く引いてしまった"}).get_data(
        as_text=True
    )
    assert 'ol class="results"' in html and "注意" in html


def test_outcome_preview_uses_the_standing_engine(client):
    w = CASES["warning_outcome"]
    html = client.get(
        f"/wizard/{w['game']}/{w['infraction']}", query_string={f"prior.{w['level']}": "1"}
    ).get_data(as_text=True)
    assert "格上げできます" in html and "自動ではありません" in html


def test_outcome_preview_rejects_bad_counts(client):
    w = CASES["warning_outcome"]
    for bad in ("-1", "abc", "999999"):
        resp = client.get(f"/wizard/{w['game']}/{w['infraction']}", query_string={f"prior.{w['level']}": bad})
        assert resp.status_code == 400
        assert "0 から 20 の数字" in resp.get_data(as_text=True)


def test_unknown_game_or_infraction_is_a_japanese_404(client):
    for url in ("/wizard/mtg", "/wizard/lycee/no-such-thing", "/training/mtg", "/wizard/mtg/graph"):
        resp = client.get(url)
        assert resp.status_code == 404 and "ページが見つかりません" in resp.get_data(as_text=True)


@pytest.mark.parametrize("game", GAMES)
def test_graph_view_lists_every_outcome(client, library, game):
    html = client.get(f"/wizard/{game}/graph").get_data(as_text=True)
    for inf in library.policies.games[game].infractions.values():
        assert f"/wizard/{game}/{inf.id}" in html


def test_training_run_scores_and_lists_the_missed(client, library):
    resp = client.get("/training/lycee/start")
    assert resp.status_code == 302
    url = resp.headers["Location"]
    run = re.search(r"run=([^&]+)", url).group(1).replace("%2C", ",").split(",")
    assert 1 <= len(run) <= 10
    html = client.get(url).get_data(as_text=True)
    assert "規定なし（ヘッドジャッジの判断）" in html
    # Answer 規定なし to every question.
    answers = []
    for _i in range(len(run)):
        answers.append("none")
        html = client.get(
            "/training/lycee", query_string={"run": ",".join(run), "a": ",".join(answers)}
        ).get_data(as_text=True)
        assert "正解" in html
    html = client.get(
        "/training/lycee", query_string={"run": ",".join(run), "a": ",".join(answers), "next": 1}
    ).get_data(as_text=True)
    want = CASES["training"]["lycee"]
    right = sum(1 for r in run if want[r] == "none")
    assert f"{len(run)} 問中 {right} 問正解" in html
    # The table's answers score every question right.
    answers = [want[r] for r in run]
    html = client.get(
        "/training/lycee", query_string={"run": ",".join(run), "a": ",".join(answers), "next": 1}
    ).get_data(as_text=True)
    assert f"{len(run)} 問中 {len(run)} 問正解" in html


def test_training_rejects_a_tampered_url(client):
    for params in ({"run": "x,y"}, {"run": "a" * 50}, {"run": ",".join(["z"] * 11)}):
        resp = client.get("/training/ijinden", query_string=params)
        assert resp.status_code == 400 and "最初からやり直してください" in resp.get_data(as_text=True)


# --- API ------------------------------------------------------------------------------------------------


def test_api_infractions_contract(client):
    data = client.get(
        "/api/infractions", query_string={"game": "ijinden", "q": "対戦相手と勝敗を相談していた"}
    ).get_json()
    assert data["results"]
    r = data["results"][0]
    for key in ("id", "name", "penalty", "discretion", "remedy", "citations", "url"):
        assert key in r
    assert r["penalty"] == "失格"
    assert all(isinstance(c, str) and c.startswith("ijinden/") for c in r["citations"])


def test_api_infractions_without_query_lists_the_game(client):
    data = client.get("/api/infractions", query_string={"game": "dm-senshu"}).get_json()
    assert [r["id"].split("/", 1)[1] for r in data["results"]] == CASES["listed"]["dm-senshu"]
    assert all(r["penalty"] is None for r in data["results"])


def test_api_games_names_each_policy(client):
    for g in client.get("/api/games").get_json():
        assert g["policy"]


@pytest.mark.parametrize(
    "params,status,code",
    [
        ({"game": "mtg", "q": "遅刻"}, 404, "unknown_game"),
        ({"q": "遅刻", "limit": "0"}, 400, "bad_limit"),
        ({"q": "遅刻", "limit": "x"}, 400, "bad_limit"),
    ],
)
def test_api_infractions_bad_input(client, params, status, code):
    resp = client.get("/api/infractions", query_string=params)
    assert resp.status_code == status and resp.get_json()["error"]["code"] == code


@pytest.mark.parametrize(
    "body,code",
    [
        (None, "bad_json"),
        ({"penalties": "注意"}, "bad_json"),
        ({"penalties": [1, 2]}, "bad_penalty"),
        ({"penalties": ["イエローカード"]}, "unknown_penalty"),
        ({"penalties": ["注意"] * 201}, "too_many"),
    ],
)
def test_api_standing_bad_input(client, body, code):
    resp = (
        client.post("/api/policies/lycee/standing", json=body)
        if body is not None
        else client.post("/api/policies/lycee/standing", data=b"\xff\xfe", content_type="application/json")
    )
    assert resp.status_code == 400
    err = resp.get_json()["error"]
    assert err["code"] == code and err["message"]


def test_api_standing_on_a_game_without_a_ladder_says_so(client):
    resp = client.post("/api/policies/dm-senshu/standing", json={"penalties": ["警告"]})
    assert resp.status_code == 400 and "ペナルティの段階がありません" in resp.get_json()["error"]["message"]
    data = client.post("/api/policies/dm-senshu/standing", json={"penalties": []}).get_json()
    assert data["removed"] is False and data["notes"]


def test_api_policy(client):
    data = client.get("/api/policies/lycee").get_json()
    assert [lv["mark"] for lv in data["levels"]] == ["N", "W"]
    assert {r["kind"] for r in data["rules"]} == {"converts", "removes"}
    assert all(r["automatic"] for r in data["rules"])
