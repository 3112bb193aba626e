"""Wizard pages: one question a screen, the answers so far in the query string (keyed by node id), so Back
keeps them and the link can be sent to the head judge. The outcome page shows the penalty, the remedy, what
else happens, what the text leaves to the judge, the citations, and the standing the player would reach.
Training runs ten scenarios with the state in the query string too: no sign-in, nothing stored."""

from __future__ import annotations

import random
from urllib.parse import urlencode

from flask import abort, make_response, redirect, render_template, request, url_for

from ..decks import DeckError
from ..decks import check as check_deck
from ..errors import JudgeappError
from ..library import current_library
from ..policy import NO_RULE_LABEL, Node, Policy, standing
from ..rules.routes import chosen_game, remember_game
from . import bp

RESERVED = {"at", "q", "next", "run", "a"}
MAX_PRIOR = 20  # per level: more than a judge would ever enter


def policy_or_404(game: str) -> Policy:
    policies = current_library().policies
    policy = policies.get(game) if policies else None
    if policy is None:
        abort(404)
    return policy


def walk(policy: Policy, args) -> tuple[list[tuple[Node, object]], Node | None, str | None]:
    """Follow the answers in the query string from the start: (path, node to ask, outcome reached)."""
    path: list[tuple[Node, object]] = []
    node = policy.nodes[policy.wizard.start]
    at = args.get("at")
    for _ in range(len(policy.nodes) + 1):
        if node.id == at:
            return path, node, None
        chosen = args.get(node.id)
        answer = next((a for a in node.answers if a.id == chosen), None)
        if answer is None:
            return path, node, None
        path.append((node, answer))
        if answer.outcome:
            return path, None, answer.outcome
        node = policy.nodes[answer.next]
    return path, node, None  # not reached: the tree is checked for cycles at load time


def path_params(path) -> dict[str, str]:
    return {node.id: answer.id for node, answer in path}


def with_query(url: str, params: dict[str, str]) -> str:
    """A URL with the wizard's answers as its query string (node ids are data: never url_for keywords)."""
    return f"{url}?{urlencode(params)}" if params else url


def answer_url(policy: Policy, path, node: Node, answer) -> str:
    params = path_params(path)
    params[node.id] = answer.id
    if answer.outcome:
        return with_query(url_for("wizard.outcome", game=policy.game, infraction_id=answer.outcome), params)
    return with_query(url_for("wizard.step", game=policy.game), params)


def back_url(policy: Policy, path) -> str | None:
    """One question back, with every answer kept (the earlier choice is shown as chosen)."""
    if not path:
        return None
    return with_query(url_for("wizard.step", game=policy.game), {**path_params(path), "at": path[-1][0].id})


def change_urls(policy: Policy, path) -> list[str]:
    params = path_params(path)
    return [
        with_query(url_for("wizard.step", game=policy.game), {**params, "at": node.id}) for node, _ in path
    ]


@bp.get("/wizard")
def choose():
    """Which game? (the last one chosen goes first)."""
    lib = current_library()
    game = chosen_game()
    return render_template(
        "wizard/choose.html", games=lib.corpus.games, policies=lib.policies.games, game=game
    )


@bp.get("/wizard/lookup")
def lookup_all():
    """The situation lookup across every game, from the home page: answers grouped by game."""
    lib = current_library()
    q = request.args.get("q", "").strip()
    found = lib.lookup.search_all(q) if q else None
    games = lib.corpus.games
    names = {g: game.name for g, game in games.items()}  # for the lookup offline, grouped as here
    # the game the story names, else the one the judge chose last, goes first where its text fits, and the
    # page says where it does not
    first = found.named[0] if found is not None and found.named else chosen_game()
    return render_template("wizard/lookup.html", q=q, found=found, games=games, game_names=names, first=first)


@bp.get("/wizard/<game>")
def step(game: str):
    """The next question on the path, and the situation lookup on the first page."""
    policy = policy_or_404(game)
    lib = current_library()
    path, node, outcome = walk(policy, request.args)
    if outcome:
        return redirect(
            with_query(url_for("wizard.outcome", game=game, infraction_id=outcome), path_params(path))
        )
    q = request.args.get("q", "").strip()
    found = lookup(game, q, 8) if q else None
    resp = render_template(
        "wizard/step.html",
        policy=policy,
        game_obj=lib.corpus.games[game],
        node=node,
        path=path,
        chosen=request.args.get(node.id),
        answer_url=lambda a: answer_url(policy, path, node, a),
        back=back_url(policy, path),
        q=q,
        found=found,
    )
    return remember_game(make_response(resp), game)


def lookup(game: str | None, q: str, limit: int):
    """What the text decides for a situation typed in plain Japanese (judgeapp/lookup.py)."""
    return current_library().lookup.search(q, game=game, limit=limit)


def prior_penalties(policy: Policy) -> tuple[dict[str, int], list[str]]:
    """The player's earlier penalties as the judge entered them (prior.<level id>=n), in level order."""
    counts: dict[str, int] = {}
    seq: list[str] = []
    for item in list(policy.levels.values()) + list(policy.consequences.values()):
        raw = request.args.get(f"prior.{item.id}", "").strip()
        if not raw:
            continue
        try:
            n = int(raw)
        except ValueError:
            raise JudgeappError(
                f"「{item.label}」の回数は 0 から {MAX_PRIOR} の数字で入力してください。", 400, "bad_prior"
            ) from None
        if not 0 <= n <= MAX_PRIOR:
            raise JudgeappError(
                f"「{item.label}」の回数は 0 から {MAX_PRIOR} の数字で入力してください。", 400, "bad_prior"
            )
        if n:
            counts[item.id] = n
            seq += [item.id] * n
    return counts, seq


@bp.get("/wizard/<game>/graph")
def graph(game: str):
    """The whole tree on one page, for reviewers: every question, answer and outcome."""
    policy = policy_or_404(game)
    return render_template("wizard/graph.html", policy=policy, game_obj=current_library().corpus.games[game])


@bp.get("/wizard/<game>/<infraction_id>")
def outcome(game: str, infraction_id: str):
    """What the text prescribes, where it says so, and what this player would then stand at."""
    policy = policy_or_404(game)
    lib = current_library()
    infraction = policy.infractions.get(infraction_id) or abort(404)
    path, _, reached = walk(policy, request.args)
    if reached != infraction_id:
        path = []  # opened from the situation lookup or a shared link without the answers
    prior_counts, prior_seq = prior_penalties(policy)
    preview = None
    item = policy.penalty_item(infraction)
    if item is not None and (policy.levels or getattr(item, "removes", False) or prior_seq):
        preview = standing(policy, prior_seq + [item.id])  # a StandingError renders as a 400 page
    resp = render_template(
        "wizard/outcome.html",
        record_url=record_url(game, infraction_id, path_params(path)),
        policy=policy,
        game_obj=lib.corpus.games[game],
        inf=infraction,
        path=path,
        back=back_url(policy, path),
        changes=change_urls(policy, path),
        penalty=item,
        corpus=lib.corpus,
        preview=preview,
        prior=prior_counts,
        path_params=path_params(path),
        also=[policy.consequences[c] for c in infraction.also_consequences],
    )
    return remember_game(make_response(resp), game)


def record_url(game: str, infraction_id: str, answers: dict[str, str]) -> str | None:
    """ "Record it" for a judge signed in to an event of this game."""
    from ..events.auth import current_db, current_staff
    from ..events.permissions import can_record
    from ..events.staff import get_event

    staff = current_staff()
    if not can_record(staff):
        return None
    if get_event(current_db(), staff.event_id).game != game:
        return None
    return url_for(
        "events.record",
        event_id=staff.event_id,
        infraction=f"{game}/{infraction_id}",
        **{f"a.{k}": v for k, v in answers.items()},
    )


# --- training ----------------------------------------------------------------------------------------


def choices(policy: Policy) -> list[tuple[str, str]]:
    """What a trainee picks from: the levels, the consequences some infraction prescribes, and 規定なし."""
    used = {i.penalty for i in policy.infractions.values() if i.penalty}
    out = [
        (lv.id, f"{lv.label}（{lv.mark}）" if lv.mark not in lv.label else lv.label)
        for lv in policy.levels.values()
    ]
    out += [(c.id, c.label) for c in policy.consequences.values() if c.id in used]
    if any(i.procedure for i in policy.infractions.values()):
        out.append(("no-penalty", "ペナルティなし（規定の手続きのみ）"))
    # who decides what the text leaves open: the head judge, unless the policy says otherwise (tcg-taikai 2g:
    # the floor judge first, the head judge only on appeal)
    out.append(("none", NO_RULE_LABEL if policy.file.hand_off is None else "規定なし（ジャッジの判断）"))
    return out


def expected(policy: Policy, scenario) -> str:
    """The answer the scenario's infraction gives."""
    inf = policy.infractions[scenario.infraction]
    return inf.penalty or ("no-penalty" if inf.procedure else "none")


def accepted(policy: Policy, scenario) -> list[str]:
    """Every right answer: the infraction's, and the others the text allows (a suspension it says an
    official 「できます」 issue is never the only right answer)."""
    return list(dict.fromkeys([expected(policy, scenario), *scenario.accept]))


@bp.get("/training")
def training_choose():
    lib = current_library()
    return render_template(
        "wizard/training_choose.html", games=lib.corpus.games, policies=lib.policies.games, game=chosen_game()
    )


@bp.get("/training/<game>")
def training(game: str):
    """A run of up to ten scenarios; the state (scenario ids, answers) lives in the query string."""
    policy = policy_or_404(game)
    lib = current_library()
    scenarios = {s.id: s for s in policy.training.scenarios}
    run_raw = request.args.get("run", "")
    if not run_raw:
        return render_template(
            "wizard/training.html",
            policy=policy,
            game_obj=lib.corpus.games[game],
            stage="intro",
            total=len(scenarios),
        )
    run = run_raw.split(",")
    answers = [a for a in request.args.get("a", "").split(",") if a]
    valid = {cid for cid, _ in choices(policy)}
    if (
        len(run) > 10
        or len(set(run)) != len(run)
        or any(r not in scenarios for r in run)
        or len(answers) > len(run)
        or any(a not in valid for a in answers)
    ):
        raise JudgeappError(
            "練習の URL が正しくありません。最初からやり直してください。", 400, "bad_training"
        )
    labels = dict(choices(policy))

    def url(**kw):
        return url_for("wizard.training", game=game, run=",".join(run), **kw)

    common = dict(
        policy=policy,
        game_obj=lib.corpus.games[game],
        run=run,
        answers=answers,
        labels=labels,
        corpus=lib.corpus,
        scenarios=scenarios,
        expected=lambda s: expected(policy, s),
        accepted=lambda s: accepted(policy, s),
        url=url,
    )
    k = len(answers)
    if k and request.args.get("next") != "1":
        s = scenarios[run[k - 1]]
        return render_template(
            "wizard/training.html",
            stage="feedback",
            scenario=s,
            given=answers[-1],
            number=k,
            inf=policy.infractions[s.infraction],
            **common,
        )
    if k < len(run):
        s = scenarios[run[k]]
        prefix = ",".join(answers)
        return render_template(
            "wizard/training.html",
            stage="question",
            scenario=s,
            number=k + 1,
            options=[
                (cid, label, url(a=f"{prefix},{cid}" if prefix else cid)) for cid, label in choices(policy)
            ],
            **common,
        )
    missed = [
        scenarios[r] for r, a in zip(run, answers, strict=False) if a not in accepted(policy, scenarios[r])
    ]
    return render_template(
        "wizard/training.html", stage="summary", missed=missed, score=len(run) - len(missed), **common
    )


@bp.get("/training/<game>/start")
def training_start(game: str):
    policy = policy_or_404(game)
    ids = [s.id for s in policy.training.scenarios]
    run = random.sample(ids, min(10, len(ids)))
    return redirect(url_for("wizard.training", game=game, run=",".join(run)))


# --- deck check ------------------------------------------------------------------------------------------


@bp.route("/decks", methods=["GET", "POST"])
def decks():
    """Paste a deck list, get the verdict first, then each problem with its rule and section.

    The game is always asked for (no default from the last game viewed): a list checked under the wrong
    game's rules would get a wrong verdict. The verdict names the game it was checked under."""
    lib = current_library()
    game = request.values.get("game") or None
    if game is not None and game not in lib.decks:
        raise JudgeappError(f"ゲーム「{game[:40]}」のデッキの規定はありません。", 404, "unknown_game")
    text = request.form.get("deck", "") if request.method == "POST" else ""
    report = error = None
    if request.method == "POST" and game is None:
        error = "ゲームを選んでください。デッキの規定はゲームごとに違います。"
    elif request.method == "POST":
        try:
            report = check_deck(lib.decks[game], text)
        except DeckError as exc:
            error = str(exc)
    resp = make_response(
        render_template(
            "wizard/decks.html",
            games=lib.corpus.games,
            decks=lib.decks,
            game=game,
            text=text,
            report=report,
            error=error,
            corpus=lib.corpus,
            rules=lib.decks[game] if game else None,
        ),
        400 if error else 200,
    )
    return remember_game(resp, game)
