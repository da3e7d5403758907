"""Training on gold claims: a qualification test that measures skill and cannot be gamed.

Reported (issue 24): junk QA pairs and one verdict for everything passed P2; P2 feedback gave
away the P3 key; any gold claim could be answered, so the trainee chose what counted; new
accounts were qualified without training. Each is reproduced here, with trainee bots that
must fail and an honest trainee who must pass (so the bots fail for the right reason).
"""

import random
from collections import Counter

import pytest
from django.urls import reverse

from annotation import accounts, assignment, training
from annotation.models import (
    AuditEntry,
    Claim,
    QualificationThresholds,
    TrainingAnswer,
    TrainingDraw,
    User,
)
from annotation.vocabulary import ClaimType, Phase, Strategy, Verdict
from tests.factories import AnnotatorFactory, AnswerFactory, GoldClaimFactory

NUMERICAL, QUOTE = ClaimType.NUMERICAL.value, ClaimType.QUOTE.value
WRITTEN, NUMBERS = Strategy.WRITTEN_EVIDENCE.value, Strategy.NUMERICAL_COMPARISON.value
LABELS = [v.value for v in Verdict]
PRACTICE, JUDGED = 2, 4


def make_gold(n_per_label: int = 6) -> list[Claim]:
    """Gold claims of all four labels, each with two real QA pairs; consecutive ids spread
    every label over the three pools."""
    claims = []
    for label in LABELS:
        for _ in range(n_per_label):
            claim = GoldClaimFactory(label=label)
            n = claim.pk
            claim.text = f"The city council spent {n} million on new parks in 2019."
            claim.save(update_fields=["text"])
            evidence = claim.evidence_rounds.get()
            AnswerFactory(
                question__evidence_round=evidence,
                question__text=f"Which committee approved parks budget number {n}?",
                text=f"The finance committee approved budget {n} in March",
            )
            claims.append(claim)
    return claims


@pytest.fixture
def trainee(db):
    return AnnotatorFactory(username="trainee", qualified_phases=[])


@pytest.fixture
def bar(db):
    return QualificationThresholds.objects.create(practice_items=PRACTICE, items_per_phase=JUDGED)


@pytest.fixture
def gold(db):
    return make_gold()


# --- The trainee bots ---------------------------------------------------------------------


def honest(phase: int, claim: Claim, key: dict) -> dict:
    """Answers as the gold does: the standard a real annotator is measured against."""
    if phase == Phase.NORMALISATION:
        return {
            "claim_types": claim.claim_types,
            "fact_checking_strategies": claim.fact_checking_strategies,
        }
    fields: dict = {"verdict": claim.label}
    if phase == Phase.QUESTIONS:
        for n, pair in enumerate(training.gold_pairs(claim)):
            fields[f"question_{n}"] = pair["question"]
            fields[f"answer_{n}"] = pair["answers"][0]
    return fields


def junk(verdict: str):
    """The reported case: "x? → y", "z? → w", one verdict for everything, any types."""

    def answer(phase: int, claim: Claim, key: dict) -> dict:
        if phase == Phase.NORMALISATION:
            return {"claim_types": [QUOTE], "fact_checking_strategies": [NUMBERS]}
        fields = {"verdict": verdict}
        if phase == Phase.QUESTIONS:
            fields.update(question_0="x?", answer_0="y", question_1="z?", answer_1="w")
        return fields

    return answer


def copycat(phase: int, claim: Claim, key: dict) -> dict:
    """Gives the verdict the feedback showed for this claim text, else the one seen most."""
    fields: dict = {}
    if phase == Phase.NORMALISATION:
        return {"claim_types": [NUMERICAL], "fact_checking_strategies": [WRITTEN]}
    seen = Counter(key.values()).most_common(1)
    fields["verdict"] = key.get(claim.text) or (seen[0][0] if seen else Verdict.REFUTED.value)
    if phase == Phase.QUESTIONS:
        # Real-looking pairs from the gold of *other* claims it saw: off-topic.
        fields.update(
            question_0="Which committee approved the parks budget in the city?",
            answer_0="The finance committee approved it",
        )
    return fields


def run_bot(client, phase: int, bot, key: dict | None = None) -> dict:
    """Answer every claim of the bot's draw through the screens, reading the feedback into
    `key` (claim text → the reference verdict shown); returns the key."""
    key = {} if key is None else key
    for _ in range(PRACTICE + JUDGED + 1):  # bounded: one more than the draw
        page = client.get(reverse("annotation:training", args=[phase]))
        claim_pk = page.context["claim_pk"]
        if claim_pk is None:
            break
        claim = Claim.objects.get(pk=claim_pk)
        response = client.post(
            reverse("annotation:training-hand-in", args=[phase, claim_pk]),
            bot(phase, claim, key),
            follow=True,
        )
        assert response.status_code == 200
        for row in response.context["rows"]:
            if row.what == "Verdict":
                key[claim.text] = row.gold
    return key


def passed(user: User, phase: int) -> bool | None:
    return training.standing(user, phase).passed


@pytest.mark.parametrize("verdict", LABELS)
def test_a_bot_with_junk_pairs_and_one_verdict_fails_every_phase(
    client, trainee, bar, gold, verdict
):
    client.force_login(trainee)
    for phase in training.TRAINING_PHASES:
        run_bot(client, phase, junk(verdict))

    assert [passed(trainee, p) for p in training.TRAINING_PHASES] == [False, False, False]
    p2 = training.standing(trainee, Phase.QUESTIONS).measures
    assert p2["real_qa_pairs"] == 0
    # A constant verdict scores at chance on the balanced draw: one label in four.
    assert p2["verdict_accuracy"] == pytest.approx(0.25)
    trainee.refresh_from_db()
    assert trainee.qualified_phases == []


@pytest.mark.parametrize("first,then", [(2, 3), (3, 2)])
def test_a_bot_copying_one_phases_feedback_fails_the_next(client, trainee, bar, gold, first, then):
    client.force_login(trainee)
    key = run_bot(client, first, honest)
    assert passed(trainee, first) is True
    assert len(key) == PRACTICE + JUDGED
    seen_before = dict(key)

    run_bot(client, then, copycat, key)

    # None of the next phase's claims was in the feedback it saw: the pools are disjoint.
    drawn_next = set(
        TrainingDraw.objects.filter(annotator=trainee, phase=then).values_list(
            "claim__text", flat=True
        )
    )
    assert drawn_next.isdisjoint(seen_before)
    assert passed(trainee, then) is False


def test_an_honest_trainee_passes_every_phase_and_is_qualified(client, trainee, bar, gold):
    client.force_login(trainee)
    with pytest.raises(assignment.NoTaskAvailable):
        assignment.next_task(trainee, Phase.QUESTIONS)

    for phase in training.TRAINING_PHASES:
        run_bot(client, phase, honest)

    trainee.refresh_from_db()
    assert trainee.qualified_phases == [1, 2, 3]
    assert training.standing(trainee, Phase.QUESTIONS).measures == {
        "verdict_accuracy": 1.0,
        "real_qa_pairs": 2.0,
    }
    assert AuditEntry.objects.filter(action="qualification").count() == 3


# --- Pools and draws ----------------------------------------------------------------------


def test_the_pools_split_the_gold_claims_so_no_claim_is_in_two_phases(bar, gold):
    pools = {p: set(training.pool(p).values_list("pk", flat=True)) for p in (1, 2, 3)}

    assert pools[1] | pools[2] | pools[3] == {c.pk for c in gold}
    assert not (pools[1] & pools[2] or pools[1] & pools[3] or pools[2] & pools[3])


def test_each_trainee_gets_their_own_balanced_draw_from_the_phase_pool(bar, gold):
    trainees = [AnnotatorFactory(username=f"t{i}", qualified_phases=[]) for i in range(6)]
    draws = {}
    for person in trainees:
        for phase in training.TRAINING_PHASES:
            drawn = training.draw(person, phase)
            pool = set(training.pool(phase).values_list("pk", flat=True))
            assert {d.claim_id for d in drawn} <= pool
            assert [d.judged for d in drawn] == [False] * PRACTICE + [True] * JUDGED
            if phase != Phase.NORMALISATION:
                counts = Counter(d.claim.label for d in drawn if d.judged)
                assert max(counts.values()) - min(counts.values()) <= 1
                assert len(counts) == 4
        draws[person] = [d.claim_id for d in training.draw(person, Phase.QUESTIONS)]
        # Drawn once and kept.
        assert [d.claim_id for d in training.draw(person, Phase.QUESTIONS)] == draws[person]

    assert len({tuple(d) for d in draws.values()}) > 1


def test_a_balanced_draw_never_favours_a_label_that_others_could_have_matched():
    """Over random pools: a label is drawn at most once more than any label that still had
    claims to give, so a constant verdict scores at most ceil(n / labels) / n."""
    rng = random.Random(24)
    for _ in range(300):
        pool = [
            Claim(pk=n, label=rng.choice(LABELS[: rng.randint(1, 4)]))
            for n in range(rng.randint(0, 40))
        ]
        n = rng.randint(0, 25)

        drawn = training._balanced(pool, n, rng)

        assert len(drawn) == min(n, len(pool)) and len({c.pk for c in drawn}) == len(drawn)
        available, counts = Counter(c.label for c in pool), Counter(c.label for c in drawn)
        for label in counts:
            for other in available:
                if counts[other] < available[other]:
                    assert counts[label] <= counts[other] + 1


def test_the_default_protocol_is_ten_practice_claims_then_ten_judged(trainee):
    make_gold(n_per_label=17)  # 68 claims: at least 20 per pool with every label

    drawn = training.draw(trainee, Phase.QUALITY_CHECK)

    assert [d.judged for d in drawn] == [False] * 10 + [True] * 10
    assert training.standing(trainee, Phase.QUALITY_CHECK).needed == 10


def test_answering_a_gold_claim_that_was_not_drawn_is_refused_and_does_not_count(
    client, trainee, bar, gold
):
    client.force_login(trainee)
    client.get(reverse("annotation:training", args=[3]))
    drawn = {d.claim_id for d in TrainingDraw.objects.filter(annotator=trainee)}
    other = next(c for c in gold if c.pk not in drawn)

    response = client.post(
        reverse("annotation:training-hand-in", args=[3, other.pk]), {"verdict": other.label}
    )

    assert response.status_code == 409
    assert "not one of the training claims drawn for you" in response.content.decode()
    assert not TrainingAnswer.objects.exists()


def test_skipping_ahead_to_a_later_drawn_claim_is_refused(client, trainee, bar, gold):
    client.force_login(trainee)
    client.get(reverse("annotation:training", args=[3]))
    last = TrainingDraw.objects.filter(annotator=trainee, phase=3).last()

    response = client.post(
        reverse("annotation:training-hand-in", args=[3, last.claim_id]),
        {"verdict": last.claim.label},
    )

    assert response.status_code == 409
    assert "in the order given" in response.content.decode()
    assert not TrainingAnswer.objects.exists()


def test_only_the_judged_claims_count_and_the_practice_ones_do_not(trainee, bar, gold):
    drawn = training.draw(trainee, Phase.QUALITY_CHECK)
    for item in drawn:
        # Wrong on every practice claim, right on every judged one.
        verdict = item.claim.label if item.judged else "Nope"
        training.hand_in(trainee, Phase.QUALITY_CHECK, item.claim, {"verdict": verdict})

    result = training.standing(trainee, Phase.QUALITY_CHECK)
    assert (result.practised, result.answered) == (PRACTICE, JUDGED)
    assert result.measures["verdict_accuracy"] == 1.0
    assert result.passed is True


def test_a_second_click_on_an_answered_claim_keeps_the_first_answer(trainee, bar, gold):
    first = training.draw(trainee, Phase.QUALITY_CHECK)[0].claim
    kept = training.hand_in(trainee, 3, first, {"verdict": first.label})

    again = training.hand_in(trainee, 3, first, {"verdict": "Supported"})

    assert again.pk == kept.pk and TrainingAnswer.objects.count() == 1


def test_a_pool_too_small_or_too_uniform_says_so_instead_of_training(client, trainee, bar):
    for _ in range(9):
        GoldClaimFactory(label=Verdict.REFUTED)
    client.force_login(trainee)

    page = client.get(reverse("annotation:training", args=[3])).content.decode()

    assert "needs 6 reference claims in its pool and has 3" in page
    for _ in range(30):
        GoldClaimFactory(label=Verdict.REFUTED)
    assert "one verdict given to every claim would reach the bar" in training.pool_problem(3)
    with pytest.raises(training.TrainingRefused):
        training.draw(trainee, Phase.QUALITY_CHECK)


# --- Real QA pairs and feedback -----------------------------------------------------------


def test_junk_pairs_are_shown_as_not_counted_and_real_ones_as_counted(client, trainee, bar, gold):
    client.force_login(trainee)
    page = client.get(reverse("annotation:training", args=[2]))
    claim = Claim.objects.get(pk=page.context["claim_pk"])
    gold_pair = training.gold_pairs(claim)[0]

    response = client.post(
        reverse("annotation:training-hand-in", args=[2, claim.pk]),
        {
            "question_0": gold_pair["question"],
            "answer_0": gold_pair["answers"][0],
            "question_1": "x?",
            "answer_1": "y",
            "verdict": claim.label,
        },
        follow=True,
    )

    rows = {row.what: row for row in response.context["rows"]}
    assert rows["Question 1"].same is True and rows["Question 1"].note.startswith("Counted")
    assert rows["Question 2"].same is False
    assert "the question needs at least 3 words" in rows["Question 2"].note
    assert TrainingAnswer.objects.get().score["qa_pairs"] == 1


def test_a_p1_training_item_shows_the_answer_beside_the_gold_with_differences_marked(
    client, trainee, bar, gold
):
    client.force_login(trainee)
    page = client.get(reverse("annotation:training", args=[1]))

    response = client.post(
        reverse("annotation:training-hand-in", args=[1, page.context["claim_pk"]]),
        {"claim_types": [NUMERICAL, QUOTE], "fact_checking_strategies": [WRITTEN]},
        follow=True,
    )

    html = response.content.decode()
    assert 'id="training-feedback"' in html
    rows = {row.what: row for row in response.context["rows"]}
    assert rows["Claim types"].yours == f"{NUMERICAL}, {QUOTE}"
    assert rows["Claim types"].same is False
    assert rows["Strategies"].same is True
    assert html.count('class="differs"') == 1
    assert TrainingAnswer.objects.get().score == {
        "types_f1": pytest.approx(2 / 3),
        "strategies_f1": 1.0,
    }


def test_f1_of_label_sets_is_computed_from_precision_and_recall():
    assert training.f1([NUMERICAL, QUOTE], [NUMERICAL]) == pytest.approx(2 / 3)
    assert training.f1([], []) == 1.0
    assert training.f1([QUOTE], [NUMERICAL]) == 0.0


def test_the_p3_training_page_is_blind_to_the_gold_label(client, trainee, bar, gold):
    client.force_login(trainee)
    page = client.get(reverse("annotation:training", args=[3]))
    claim = Claim.objects.get(pk=page.context["claim_pk"])

    html = page.content.decode().split('id="training-form"')[0]

    assert training.gold_pairs(claim)[0]["question"] in html
    assert claim.label not in html.replace("Phase", "")


def test_a_training_answer_is_only_shown_to_its_author(client, trainee, bar, gold, annotator):
    first = training.draw(trainee, Phase.QUALITY_CHECK)[0].claim
    answer = training.hand_in(trainee, Phase.QUALITY_CHECK, first, {"verdict": first.label})
    client.force_login(annotator)

    assert client.get(reverse("annotation:training-feedback", args=[answer.pk])).status_code == 404


def test_there_is_no_training_for_p4_and_hand_in_is_post_only(client, trainee, gold):
    client.force_login(trainee)

    assert client.get(reverse("annotation:training", args=[4])).status_code == 404
    assert (
        client.get(reverse("annotation:training-hand-in", args=[1, gold[0].pk])).status_code == 405
    )


def test_an_incomplete_answer_is_refused_with_the_form_again(client, trainee, bar, gold):
    client.force_login(trainee)

    response = client.post(
        reverse("annotation:training-hand-in", args=[2, gold[0].pk]), {"answer_0": "2.1m"}
    )

    assert response.status_code == 422
    assert "An answer needs its question." in response.content.decode()
    assert not TrainingAnswer.objects.exists()


# --- No qualification by default; waivers with a reason -----------------------------------


def test_bulk_created_accounts_start_in_training(client, manager):
    client.force_login(manager)
    page = client.get(reverse("annotation:people")).content.decode()
    assert 'name="phases" value="1" checked' not in page.replace("\n", " ")

    client.post(reverse("annotation:people"), {"usernames": "ana\nbasil"})

    assert [u.qualified_phases for u in User.objects.filter(username__in=["ana", "basil"])] == [
        [],
        [],
    ]


def test_ticking_a_training_phase_without_a_reason_is_refused(client, manager):
    client.force_login(manager)

    response = client.post(reverse("annotation:people"), {"usernames": "ana", "phases": [2]})

    assert response.status_code == 422
    assert "give a reason for waiving it" in response.content.decode()
    assert not User.objects.filter(username="ana").exists()


def test_a_waiver_with_a_reason_qualifies_and_is_audited_per_person(client, manager):
    client.force_login(manager)

    client.post(
        reverse("annotation:people"),
        {"usernames": "ana\nbasil", "phases": [2, 4], "waiver_reason": "trained in 2024"},
    )

    assert User.objects.get(username="ana").qualified_phases == [2, 4]
    waivers = AuditEntry.objects.filter(action="qualification", actor=manager)
    assert sorted(w.details["user"] for w in waivers) == ["ana", "basil"]
    assert {w.details["reason"] for w in waivers} == {"trained in 2024"}


def test_the_account_page_needs_a_reason_to_skip_training_but_not_after_a_pass(
    manager, trainee, bar, gold
):
    change = {"role": User.Role.ANNOTATOR, "quotas": {}, "active": True}
    with pytest.raises(accounts.AccountError, match="give a reason"):
        accounts.update_account(trainee, manager, phases=[3], **change)

    for item in training.draw(trainee, Phase.QUALITY_CHECK):
        training.hand_in(trainee, 3, item.claim, {"verdict": item.claim.label})
    trainee.refresh_from_db()
    # Passed: P3 is theirs already; P5 has no training and needs no reason.
    accounts.update_account(trainee, manager, phases=[3, 5], **change)
    trainee.refresh_from_db()
    assert trainee.qualified_phases == [3, 5]


# --- The manager's pages ------------------------------------------------------------------


def test_the_manager_sees_each_trainees_scores_and_answers_per_phase(
    client, manager, annotator, trainee, bar, gold
):
    first = training.draw(trainee, Phase.QUALITY_CHECK)[0].claim
    training.hand_in(trainee, Phase.QUALITY_CHECK, first, {"verdict": "Supported"})
    client.force_login(manager)

    overview = client.get(reverse("annotation:qualification")).content.decode()
    record = client.get(reverse("annotation:trainee", args=[trainee.pk])).content.decode()

    assert 'id="trainee-trainee"' in overview and "1/2 practice" in overview
    assert first.text in record and "Supported" in record
    client.force_login(annotator)
    assert client.get(reverse("annotation:trainee", args=[trainee.pk])).status_code == 403


def test_managers_set_the_thresholds_and_annotators_may_not(client, manager, annotator):
    url = reverse("annotation:qualification")
    values = {
        "type_strategy_f1": "0.8",
        "min_qa_pairs": "3",
        "verdict_accuracy": "0.6",
        "practice_items": "5",
        "items_per_phase": "4",
    }
    client.force_login(annotator)
    assert client.post(url, values).status_code == 403
    client.force_login(manager)
    assert QualificationThresholds.current().type_strategy_f1 == 0.7  # the shared task's bar

    client.post(url, values)
    bad = client.post(url, {**values, "verdict_accuracy": "1.5"})

    current = QualificationThresholds.current()
    assert (current.type_strategy_f1, current.min_qa_pairs, current.items_per_phase) == (0.8, 3, 4)
    assert current.practice_items == 5
    assert bad.status_code == 422


def test_the_admin_lists_thresholds_draws_and_training_answers(
    client, trainee, bar, gold, django_user_model
):
    admin = django_user_model.objects.create_superuser("root", password="x")
    first = training.draw(trainee, Phase.QUALITY_CHECK)[0].claim
    training.hand_in(trainee, Phase.QUALITY_CHECK, first, {"verdict": Verdict.REFUTED})
    client.force_login(admin)

    for model in ("qualificationthresholds", "traininganswer", "trainingdraw"):
        assert client.get(f"/admin/annotation/{model}/").status_code == 200


# --- Training looks like the real phase ---------------------------------------------------


def test_p1_and_p2_training_show_the_article_and_p2_the_search_panel_and_p3_neither(
    client, trainee, bar, gold
):
    client.force_login(trainee)
    pages = {p: client.get(reverse("annotation:training", args=[p])) for p in (1, 2, 3)}
    html = {p: page.content.decode() for p, page in pages.items()}

    assert 'id="training-article"' in html[1] and 'id="training-search"' not in html[1]
    assert 'id="training-article"' in html[2] and 'id="training-search"' in html[2]
    assert 'id="training-article"' not in html[3] and 'id="training-search"' not in html[3]
    claim = Claim.objects.get(pk=pages[2].context["claim_pk"])
    assert claim.article.url in html[2] or "web.archive.org" in html[2]


def test_the_training_search_is_bounded_by_the_claim_date_and_only_for_drawn_claims(
    client, trainee, bar, gold, monkeypatch
):
    from search_proxy import service
    from tests.annotation.test_evidence_screen import _OneResultEngine

    engine = _OneResultEngine(False)
    seen_before = []
    search = engine.search

    def spying(query, *, before, country, page):
        seen_before.append(before)
        return search(query, before=before, country=country, page=page)

    engine.search = spying
    monkeypatch.setattr(service, "get_backend", lambda name=None: engine)
    client.force_login(trainee)
    claim_pk = client.get(reverse("annotation:training", args=[2])).context["claim_pk"]
    claim = Claim.objects.get(pk=claim_pk)
    undrawn = next(c for c in gold if not TrainingDraw.objects.filter(claim=c).exists())

    found = client.get(reverse("annotation:training-search", args=[2, claim_pk]), {"q": "parks"})

    assert "Council budget 2019" in found.content.decode()
    assert seen_before and all(b == claim.claim_date for b in seen_before)
    url = reverse("annotation:training-search", args=[2, undrawn.pk])
    assert client.get(url, {"q": "parks"}).status_code == 404
    assert client.get(reverse("annotation:training-search", args=[3, claim_pk])).status_code == 404


def test_the_training_search_answers_htmx_with_its_fragment_and_a_plain_form_with_the_page(
    client, trainee, bar, gold, monkeypatch
):
    from search_proxy import service
    from tests.annotation.test_evidence_screen import _OneResultEngine

    monkeypatch.setattr(service, "get_backend", lambda name=None: _OneResultEngine(False))
    client.force_login(trainee)
    claim_pk = client.get(reverse("annotation:training", args=[2])).context["claim_pk"]
    url = reverse("annotation:training-search", args=[2, claim_pk])

    fragment = client.get(url, {"q": "parks"}, HTTP_HX_REQUEST="true").content.decode()
    page = client.get(url, {"q": "parks"}).content.decode()

    assert fragment.lstrip().startswith('<div id="search-results"') and "<html" not in fragment
    assert "<html" in page and 'id="training-form"' in page
    assert "Council budget 2019" in fragment and "Council budget 2019" in page
    box = page[page.index('<input type="search" name="q"') :].split(">", 1)[0]
    assert 'value="parks"' in box


# --- On real gold claims ------------------------------------------------------------------


def test_on_dev_json_gold_the_junk_bot_fails_and_an_honest_trainee_passes_p2(db, dev_json, client):
    """Real claims, real QA pairs and the real label mix (61% Refuted): the default protocol
    (10 practice, 10 judged) from 400 imported claims."""
    import json

    from exports.averitec_json import parse_dataset
    from exports.dataset import import_claims

    records = parse_dataset(json.loads(dev_json.read_text())[:400])
    import_claims(records, batch_name="gold", source_file="dev.json")
    honest_one, junk_one = (
        AnnotatorFactory(username=name, qualified_phases=[]) for name in ("honest", "junk")
    )

    for person, bot in ((honest_one, honest), (junk_one, junk(Verdict.REFUTED.value))):
        client.force_login(person)
        for _ in range(21):  # bounded: one more than the draw
            page = client.get(reverse("annotation:training", args=[2]))
            if page.context["claim_pk"] is None:
                break
            claim = Claim.objects.get(pk=page.context["claim_pk"])
            client.post(
                reverse("annotation:training-hand-in", args=[2, claim.pk]), bot(2, claim, {})
            )

    assert training.standing(honest_one, Phase.QUESTIONS).passed is True
    junk_standing = training.standing(junk_one, Phase.QUESTIONS)
    assert junk_standing.passed is False
    assert junk_standing.measures["verdict_accuracy"] <= 0.3
