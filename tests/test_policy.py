"""The infraction data: strict loading, citations checked against the corpus, the trees' structure, the
standing engine over the sequences table, and the situation lookup over the situations table."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judgeapp import create_app
from judgeapp.cli import main as cli
from judgeapp.corpus import load_corpus
from judgeapp.policy import PolicyError, load_policies, standing, tally_of

from .conftest import CORPUS_DIRS, GAMES, INFRACTIONS_DIRS, REAL_GAMES, load_cases

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

SITUATIONS = load_cases("situations.yaml")
# Written afterwards by someone who saw neither the data nor the first table: the honest figure.
HOLDOUT = load_cases("situations_holdout.yaml")
STANDINGS = load_cases("standings.yaml")


@pytest.fixture(scope="module")
def policies():
    return load_policies(INFRACTIONS_DIRS, load_corpus(CORPUS_DIRS))


# --- judgeapp check ----------------------------------------------------------------------------------


def test_check_passes_on_the_data(runner):
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 0, result.output
    for game in REAL_GAMES:
        assert f"✓ {game}:" in result.output


def _edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def _check(runner, folder: Path):
    result = runner.invoke(cli, ["check", "--infractions", str(folder)])
    assert result.exit_code == 1
    return result.output


def test_check_names_a_broken_citation(runner, broken_infractions):
    def change(d):
        d["infractions"][0]["citations"][0]["quote"] = "どこにも書かれていない文言"

    _edit(broken_infractions / "lycee" / "policy.yaml", change)
    out = _check(runner, broken_infractions)
    assert (
        "lycee/policy.yaml: infractions[0].citations[0].quote: 「どこにも書かれていない文言」 does not stand in"
        in out
    )


def test_check_names_a_citation_of_another_game(runner, broken_infractions):
    def change(d):
        d["infractions"][0]["citations"][0] = {
            "section": "ijinden/floor-rules/ch10-1",
            "quote": "イベントの間",
        }

    _edit(broken_infractions / "lycee" / "policy.yaml", change)
    assert "belongs to another game (ijinden)" in _check(runner, broken_infractions)


def test_check_names_an_unknown_section(runner, broken_infractions):
    def change(d):
        d["infractions"][0]["citations"][0]["section"] = "lycee/guideline/nowhere"

    _edit(broken_infractions / "lycee" / "policy.yaml", change)
    assert "infractions[0].citations[0].section: no section 'lycee/guideline/nowhere'" in _check(
        runner, broken_infractions
    )


def test_check_names_an_unreachable_node(runner, broken_infractions):
    def change(d):
        d["nodes"].append(
            {
                "id": "orphan",
                "question": "どこからも来ない質問",
                "answers": [
                    {
                        "id": "x",
                        "label": "x",
                        "outcome": d["nodes"][0]["answers"][0].get("outcome")
                        or next(a["outcome"] for n in d["nodes"] for a in n["answers"] if a.get("outcome")),
                    }
                ],
            }
        )

    _edit(broken_infractions / "ijinden" / "wizard.yaml", change)
    assert "ijinden/wizard.yaml: nodes[orphan]: unreachable from start" in _check(runner, broken_infractions)


def test_check_names_an_unknown_level(runner, broken_infractions):
    def change(d):
        d["infractions"][0]["penalty"] = "yellow-card"

    _edit(broken_infractions / "ijinden" / "policy.yaml", change)
    assert "ijinden/policy.yaml: infractions[0].penalty: unknown level 'yellow-card'" in _check(
        runner, broken_infractions
    )


def test_check_names_a_cycle(runner, broken_infractions):
    def change(d):
        start = d["start"]
        node = next(n for n in d["nodes"] if n["id"] != start)
        node["answers"][0] = {"id": node["answers"][0]["id"], "label": "戻る", "next": start}

    _edit(broken_infractions / "ijinden" / "wizard.yaml", change)
    assert "cycle" in _check(runner, broken_infractions)


def test_check_names_a_dead_end_node(runner, broken_infractions):
    def change(d):
        d["nodes"][0]["answers"] = []

    _edit(broken_infractions / "dm-senshu" / "wizard.yaml", change)
    assert "dm-senshu/wizard.yaml: nodes[0].answers:" in _check(runner, broken_infractions)


def test_check_names_unknown_keys_and_duplicates(runner, broken_infractions):
    def change(d):
        d["infractions"][0]["severity"] = "high"
        d["infractions"].append(dict(d["infractions"][1]))

    _edit(broken_infractions / "tcg-taikai" / "policy.yaml", change)
    out = _check(runner, broken_infractions)
    assert "tcg-taikai/policy.yaml: infractions[0].severity: Extra inputs are not permitted" in out


def test_check_names_a_duplicate_id(runner, broken_infractions):
    def change(d):
        d["infractions"].append(dict(d["infractions"][1]))

    _edit(broken_infractions / "tcg-taikai" / "policy.yaml", change)
    assert "duplicate id" in _check(runner, broken_infractions)


def test_a_restriction_the_app_could_not_enforce_is_refused(runner, broken_infractions):
    """A level the text restricts (restricted_to) must say how: the organizer's grant or the roles."""

    def change(d):
        level = next(lv for lv in d["levels"] if lv.get("grant"))
        del level["grant"]

    _edit(broken_infractions / "ijinden" / "policy.yaml", change)
    assert "restricted_to without grant or roles" in _check(runner, broken_infractions)


def test_the_app_refuses_to_start_on_broken_data(broken_infractions, tmp_path):
    def change(d):
        d["infractions"][0]["penalty"] = "yellow-card"

    _edit(broken_infractions / "lycee" / "policy.yaml", change)
    with pytest.raises(PolicyError):
        create_app(
            {
                "TESTING": True,
                "SECRET_KEY": "t",
                "INFRACTIONS_DIR": str(broken_infractions),
                "INDEX_DIR": str(tmp_path / "ix"),
                "SITUATION_INDEX_DIR": str(tmp_path / "six"),
            }
        )


# --- structure of every game's data ----------------------------------------------------------------------


# (The loader itself refuses citations of another game, unreachable outcomes, reserved node ids, levels on a
# game without a ladder and a missing penalty without its reason: the `judgeapp check` tests above break each.)


def test_every_game_has_a_policy(policies):
    assert sorted(policies.games) == GAMES


@pytest.mark.parametrize("game", GAMES)
def test_every_outcome_is_reachable_in_three_answers(policies, game):
    assert policies.games[game].depth <= 3, (
        "four taps from home: one to the game's wizard, at most three answers"
    )


@pytest.mark.parametrize("game", ["tcg-taikai", "dm-senshu"])
def test_games_without_a_ladder_say_what_the_text_leaves_open(policies, game):
    p = policies.games[game]
    assert not p.file.ladder and p.file.gaps
    # No level borrowed from another game under a consequence's name: nothing is 注意/警告 here.
    assert not {inf.penalty for inf in p.infractions.values()} & {"caution", "warning", "notice"}


def test_lycee_maps_no_infraction_to_n_or_w(policies):
    """The guideline names a penalty guideline it does not include: N or W is the head judge's call."""
    p = policies.games["lycee"]
    assert {lv.mark for lv in p.levels.values()} == {"N", "W"}
    for inf in p.infractions.values():
        assert inf.penalty not in p.levels, inf.id


def test_ijinden_levels_and_who_may_give_a_defeat(policies):
    p = policies.games["ijinden"]
    assert [lv.label for lv in p.levels.values()] == ["注意", "警告", "敗北", "失格"]
    defeat = p.resolve("敗北")
    assert defeat.restricted_to and defeat.grant and defeat.ends_game
    assert p.resolve("失格").removes
    assert all(not r.automatic for r in p.file.rules)


@pytest.mark.parametrize("game", GAMES)
def test_training_has_scenarios_for_every_game(policies, game):
    assert len(policies.games[game].training.scenarios) >= 5


# --- the standing engine over the sequences table ----------------------------------------------------------


def test_standings_table_is_large_enough():
    games = [r["game"] for r in STANDINGS]
    assert games.count("lycee") >= 8 and games.count("ijinden") >= 5


@pytest.mark.parametrize("row", STANDINGS, ids=lambda r: f"{r['game']}:{','.join(r['penalties'])}")
def test_standing_at_every_step_through_the_api(client, row):
    resp = client.post(f"/api/policies/{row['game']}/standing", json={"penalties": row["penalties"]})
    assert resp.status_code == 200, resp.get_json()
    data = resp.get_json()
    assert len(data["steps"]) == len(row["steps"])
    for i, (got, want) in enumerate(zip(data["steps"], row["steps"], strict=False), 1):
        assert got["effective"] == want["effective"], f"step {i}"
        assert got["removed"] == want["removed"], f"step {i}"
        assert bool(got["upgrades"]) == bool(want.get("upgrade", False)), f"step {i}"
    assert data["removed"] == row["steps"][-1]["removed"]
    assert data["effective"] == row["steps"][-1]["effective"]


def test_lycee_n_w_n_removes_at_the_third_step(policies):
    s = standing(policies.games["lycee"], ["N", "W", "N"])
    assert [st.removed for st in s.steps] == [False, False, True]
    assert s.counts == {"注意": 2, "警告": 1} and s.effective == {"警告": 2}
    assert any("除外" in n for n in s.steps[2].notes)
    # the conversion is said once, in the text's own words (it read 「注意 2 点は 警告 1 点に相当します
    # （注意2点が警告1点に相当します。）。」); at 4 注意 the figures say more, and the text is quoted beside them
    assert s.steps[2].notes[0] == "注意2点が警告1点に相当します。"
    four = standing(policies.games["lycee"], ["N", "N", "N", "N"]).steps[3].notes
    assert four[0] == "注意 4 点は 警告 2 点に相当します（規定：「注意2点が警告1点に相当します。」）。"


def test_ijinden_two_warnings_prompt_the_judge_and_change_nothing(policies):
    s = standing(policies.games["ijinden"], ["警告", "②"])
    assert not s.removed and s.effective == {"警告": 2}
    assert s.steps[1].upgrades and not s.steps[1].upgrades[0]["automatic"]
    assert set(s.steps[1].upgrades[0]["to"]) == {"敗北", "失格"}


def _same(a, b) -> None:
    assert (a.counts, a.effective, a.removed, a.removed_text, a.notes) == (
        b.counts,
        b.effective,
        b.removed,
        b.removed_text,
        b.notes,
    )
    assert a.steps == b.steps


@pytest.mark.parametrize("game", GAMES)
def test_a_kept_tally_comes_to_the_same_standing_as_the_whole_history(policies, game):
    """Recording adds one penalty to the tally kept with the player: for every game, every split of many
    sequences (Lycee's 2 注意 = 1 警告 and 2 警告 = removal, upgrades on offer, removing levels), the standing
    from the tally is the standing of the whole history (with the later steps)."""
    import random

    policy = policies.games[game]
    ids = [x.id for x in policy.recordable]
    if not ids:
        pytest.skip("nothing to record")
    rng = random.Random(game)
    for _ in range(150):
        seq = [rng.choice(ids) for _ in range(rng.randint(0, 9))]
        whole = standing(policy, seq)
        for cut in range(len(seq) + 1):
            start = tally_of(standing(policy, seq[:cut]))
            _same(standing(policy, seq[cut:], start=start), standing(policy, seq, last_steps=len(seq) - cut))
            if cut == len(seq):
                assert standing(policy, [], start=start).effective == whole.effective
            for k in (0, 1, 2):
                _same(
                    standing(policy, seq[cut:], last_steps=k, start=start),
                    standing(policy, seq, last_steps=min(k, len(seq) - cut)),
                )


# --- the situation lookup over the situations table ----------------------------------------------------------


def _matches(result: dict, case: dict) -> bool:
    return result["penalty"] == case["penalty"] and case["section"] in result["citations"]


def test_situations_table_covers_every_game():
    games = [c["game"] for c in SITUATIONS]
    # The real games' lookup quality (the fixture game's lookup: tests/test_fixture_game.py).
    assert len(SITUATIONS) >= 50 and all(games.count(g) >= 8 for g in REAL_GAMES)


@pytest.mark.parametrize("table", ["situations", "holdout"])
def test_situation_lookup_quality(client, table):
    cases = SITUATIONS if table == "situations" else HOLDOUT
    first = top3 = 0
    misses = []
    for case in cases:
        resp = client.get("/api/infractions", query_string={"game": case["game"], "q": case["q"], "limit": 3})
        results = resp.get_json()["results"]
        if results and _matches(results[0], case):
            first += 1
        if any(_matches(r, case) for r in results):
            top3 += 1
        else:
            misses.append(
                f"{case['game']} {case['q']!r}: want {case['penalty']} @ {case['section']}, got "
                f"{[(r['id'], r['penalty']) for r in results]}"
            )
    n = len(cases)
    print(f"\n{table}: first {first}/{n} = {first / n:.1%}, top 3 {top3}/{n} = {top3 / n:.1%}")
    for m in misses:
        print("  miss:", m)
    assert top3 / n >= 0.90, misses
    assert first / n >= 0.75, misses


def test_the_last_steps_of_a_standing_are_those_of_the_whole(policies):
    """`last_steps` (recording keeps only its own step and the one before) changes nothing but what is kept."""
    import random

    rng = random.Random(11)
    for game, policy in policies.games.items():
        names = [x.id for x in policy.recordable if x.id in policy.levels or x.id in policy.consequences]
        if not names:
            continue
        for _ in range(30):
            levels = [rng.choice(names) for _ in range(rng.randint(0, 12))]
            whole = standing(policy, levels)
            for k in (0, 1, 2):
                part = standing(policy, levels, last_steps=k)
                assert part.steps == (whole.steps[len(whole.steps) - k :] if k else []), (game, levels, k)
                assert (part.counts, part.effective, part.removed, part.notes, part.removed_text) == (
                    whole.counts,
                    whole.effective,
                    whole.removed,
                    whole.notes,
                    whole.removed_text,
                ), (game, levels, k)
