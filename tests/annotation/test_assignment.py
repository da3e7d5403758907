"""Start next, manager hand-outs, leases and quotas."""

import datetime
import random

import pytest
from django.utils import timezone

from annotation import assignment, workflow
from annotation.models import AuditEntry, PhaseQuota, StaleDraft, Task
from annotation.vocabulary import Phase
from tests import steps
from tests.factories import AnnotatorFactory, ClaimWaitingForQuestionsFactory, PooledTaskFactory


def _pooled(n=1, **kwargs):
    return [PooledTaskFactory(**kwargs) for _ in range(n)]


def test_start_next_hands_out_the_oldest_waiting_task(annotator):
    older, newer = _pooled(2)
    Task.objects.filter(pk=newer.pk).update(created_at=older.created_at - datetime.timedelta(1))
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    assert task == newer
    task.refresh_from_db()
    assert task.annotator == annotator and task.status == Task.Status.IN_PROGRESS
    assert task.lease_expires_at > timezone.now()


def test_start_next_resumes_the_task_in_progress_instead_of_taking_another(annotator):
    _pooled(2)
    first = assignment.next_task(annotator, Phase.QUESTIONS)
    assert assignment.next_task(annotator, Phase.QUESTIONS) == first
    assert Task.objects.filter(annotator=annotator).count() == 1


def _held(annotator, status, assigned_days_ago, opened=False):
    (task,) = _pooled()
    now = timezone.now()
    Task.objects.filter(pk=task.pk).update(
        annotator=annotator,
        status=status,
        assigned_at=now - datetime.timedelta(days=assigned_days_ago),
        opened_at=now - datetime.timedelta(days=assigned_days_ago) if opened else None,
    )
    task.refresh_from_db()
    return task


def test_start_next_resumes_in_one_statement_what_current_task_names_as_start_opens_it(
    annotator, django_assert_num_queries
):
    """On PostgreSQL the held task is found and opened by one UPDATE ... RETURNING; it must
    pick what current_task() picks (in progress first, then the oldest assigned) and leave
    the row as start() leaves it."""
    newer_assignment = _held(annotator, Task.Status.ASSIGNED, 1)
    older_assignment = _held(annotator, Task.Status.ASSIGNED, 3)
    in_progress = _held(annotator, Task.Status.IN_PROGRESS, 2, opened=True)
    Task.objects.filter(pk=in_progress.pk).update(draft={"questions": [{"text": "Who?"}]})
    expected = assignment.current_task(annotator, Phase.QUESTIONS)
    assert expected == in_progress
    with django_assert_num_queries(1):
        resumed = assignment.next_task(annotator, Phase.QUESTIONS)
    assert resumed == in_progress
    stored = Task.objects.get(pk=in_progress.pk)
    assert stored.opened_at == in_progress.opened_at  # kept, as start() keeps it
    assert stored.lease_expires_at > timezone.now() and resumed.status == "in_progress"
    # The task is built from the statement's row as the ORM builds it, draft included.
    fields = [field.attname for field in Task._meta.concrete_fields]
    assert [getattr(resumed, name) for name in fields] == [getattr(stored, name) for name in fields]
    assert not resumed._state.adding and resumed._state.db == "default"

    Task.objects.filter(pk=in_progress.pk).update(status=Task.Status.EXPIRED)
    assert assignment.current_task(annotator, Phase.QUESTIONS) == older_assignment
    resumed = assignment.next_task(annotator, Phase.QUESTIONS)
    assert resumed == older_assignment
    stored = Task.objects.get(pk=older_assignment.pk)
    assert stored.status == Task.Status.IN_PROGRESS and stored.opened_at is not None
    # The expired task is not revived and the newer assignment waits.
    assert Task.objects.get(pk=in_progress.pk).status == Task.Status.EXPIRED
    assert Task.objects.get(pk=newer_assignment.pk).status == Task.Status.ASSIGNED


def test_disputes_are_handed_out_before_fresh_work(annotator):
    (fresh,) = _pooled()
    (dispute,) = _pooled(phase=Phase.DISPUTE, priority=1)
    (late_dispute,) = _pooled(phase=Phase.DISPUTE, priority=1)
    (plain_p4,) = _pooled(phase=Phase.DISPUTE)
    assert assignment.next_task(annotator, Phase.DISPUTE) == dispute
    assert fresh.status == Task.Status.POOLED
    assert late_dispute.pk and plain_p4.pk


def test_an_annotator_never_gets_a_claim_of_an_article_they_touched(annotator, second_annotator):
    claim = ClaimWaitingForQuestionsFactory()
    sibling = ClaimWaitingForQuestionsFactory(article=claim.article)
    PooledTaskFactory(claim=claim)
    PooledTaskFactory(claim=sibling)
    first = assignment.next_task(annotator, Phase.QUESTIONS)
    workflow.submit_evidence(first, steps.evidence())
    with pytest.raises(assignment.NoTaskAvailable, match="No phase 2 work"):
        assignment.next_task(annotator, Phase.QUESTIONS)
    assert assignment.next_task(second_annotator, Phase.QUESTIONS).claim in (claim, sibling)


def test_the_p2_annotator_never_gets_the_p3_check_of_the_same_claim(db):
    a, b, c = AnnotatorFactory.create_batch(3)
    steps.new_article()
    steps.normalise(a)
    steps.answer(b)
    for person in (a, b):
        with pytest.raises(assignment.NoTaskAvailable):
            assignment.next_task(person, Phase.QUALITY_CHECK)
    assert assignment.next_task(c, Phase.QUALITY_CHECK).phase == Phase.QUALITY_CHECK


def test_an_annotator_not_qualified_for_a_phase_gets_nothing(outsider):
    _pooled()
    with pytest.raises(assignment.NoTaskAvailable, match="not qualified"):
        assignment.next_task(outsider, Phase.QUESTIONS)
    assert not Task.objects.filter(annotator=outsider).exists()


def test_a_deactivated_account_gets_nothing(annotator):
    _pooled()
    annotator.is_active = False
    annotator.save()
    with pytest.raises(assignment.NoTaskAvailable):
        assignment.next_task(annotator, Phase.QUESTIONS)


def test_a_quota_stops_hand_outs_once_reached(annotator):
    PhaseQuota.objects.create(annotator=annotator, phase=Phase.QUESTIONS, limit=2)
    _pooled(3)
    for _ in range(2):
        workflow.submit_evidence(assignment.next_task(annotator, Phase.QUESTIONS), steps.evidence())
    with pytest.raises(assignment.NoTaskAvailable, match="quota"):
        assignment.next_task(annotator, Phase.QUESTIONS)
    assert assignment.quota_left(annotator, Phase.QUESTIONS) == 0
    assert assignment.quota_left(annotator, Phase.QUALITY_CHECK) is None


def test_a_lapsed_lease_returns_the_task_to_the_pool_and_keeps_the_draft(
    annotator, second_annotator
):
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    task.save_draft({"questions": ["half-written"]}, version=0)
    Task.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    assert assignment.expire_lapsed_leases() == 1
    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED
    assert task.draft == {"questions": ["half-written"]}
    fresh = assignment.next_task(second_annotator, Phase.QUESTIONS)
    assert fresh.replaces == task and fresh.claim == task.claim
    # The draft travels: the next annotator of the phase starts from it.
    assert fresh.draft == {"questions": ["half-written"]}
    assert assignment.expire_lapsed_leases() == 0


def _lapse(task):
    Task.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    assert assignment.expire_lapsed_leases() == 1


def test_a_lapsed_task_comes_back_to_its_annotator_if_nobody_took_it(annotator, client):
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    task.save_draft({"questions": [], "verdict": "", "claim_correction": "x"}, version=0)
    _lapse(task)
    # Their open tab autosaves again: the task is theirs again, nothing is lost.
    client.force_login(annotator)
    response = client.post(
        f"/annotate/tasks/{task.pk}/draft/", {"draft_version": "1", "q-0-text": "Still typing"}
    )
    assert response.status_code == 200
    task.refresh_from_db()
    assert task.status == Task.Status.IN_PROGRESS
    assert task.draft["questions"][0]["text"] == "Still typing"
    assert not Task.objects.filter(replaces=task).exists()
    assert task.lease_expires_at > timezone.now()


def test_start_next_gives_back_lapsed_work_before_new_work(annotator):
    _pooled(2)
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    task.save_draft({"questions": ["mine"]}, version=0)
    _lapse(task)
    again = assignment.next_task(annotator, Phase.QUESTIONS)
    assert again.pk == task.pk and again.draft == {"questions": ["mine"]}


def test_a_lapsed_task_someone_else_took_stays_theirs(annotator, second_annotator, client):
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    _lapse(task)
    assignment.next_task(second_annotator, Phase.QUESTIONS)
    assert not assignment.reclaim_lapsed(task)
    client.force_login(annotator)
    response = client.post(f"/annotate/tasks/{task.pk}/draft/", {"draft_version": "0"})
    assert response.status_code == 409
    assert "no longer open for you" in response.content.decode()


def test_a_blind_check_draft_does_not_travel_to_the_next_checker(annotator, second_annotator):
    steps.new_article()
    steps.normalise(AnnotatorFactory())
    steps.answer(AnnotatorFactory())
    task = assignment.next_task(annotator, Phase.QUALITY_CHECK)
    task.save_draft({"verdict": "Refuted", "justification": "mine"}, version=0)
    _lapse(task)
    assert Task.objects.get(replaces=task).draft == {}
    task.refresh_from_db()
    assert task.draft["justification"] == "mine"  # kept on the lapsed task for managers


def test_activity_keeps_the_lease_alive(annotator, settings):
    settings.TASK_LEASE = datetime.timedelta(minutes=5)
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    Task.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() + datetime.timedelta(seconds=1)
    )
    task.save_draft({"a": 1}, version=0)
    task.refresh_from_db()
    assert task.lease_expires_at > timezone.now() + datetime.timedelta(minutes=4)


def test_a_stale_tab_cannot_overwrite_a_newer_draft(annotator):
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    tab_one = Task.objects.get(pk=task.pk)
    tab_two = Task.objects.get(pk=task.pk)
    assert tab_one.save_draft({"text": "newer"}, version=0) == 1
    with pytest.raises(StaleDraft):
        tab_two.save_draft({"text": "older"}, version=0)
    task.refresh_from_db()
    assert task.draft == {"text": "newer"} and task.draft_version == 1


def test_a_manager_can_release_a_task_back_to_the_pool(annotator, manager):
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    replacement = assignment.release_task(task, manager)
    task.refresh_from_db()
    assert task.status == Task.Status.RELEASED
    assert replacement.status == Task.Status.POOLED and replacement.replaces == task
    assert AuditEntry.objects.get(action="release").actor == manager


def test_a_manager_can_reassign_a_task_to_someone_who_has_not_seen_the_article(
    annotator, second_annotator, manager
):
    _pooled()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    moved = assignment.reassign_task(task, second_annotator, manager)
    assert moved.annotator == second_annotator and moved.status == Task.Status.ASSIGNED
    with pytest.raises(workflow.WorkflowError, match="already worked on this article"):
        assignment.reassign_task(moved, annotator, manager)
    assert assignment.next_task(second_annotator, Phase.QUESTIONS) == moved


def test_assigning_in_bulk_fills_the_selected_annotators_evenly(manager):
    people = AnnotatorFactory.create_batch(3)
    _pooled(10)
    PooledTaskFactory(annotator=people[0], status=Task.Status.ASSIGNED)
    handed = assignment.assign_tasks(manager, Phase.QUESTIONS, people, 8)
    counts = [Task.objects.filter(annotator=p, status=Task.Status.ASSIGNED).count() for p in people]
    assert sum(len(t) for t in handed.values()) == 8
    assert counts == [3, 3, 3]
    assert "assigned 8 phase 2 task(s)" in AuditEntry.objects.get().summary


def test_assigning_in_bulk_takes_turns_when_not_filling_evenly(manager):
    people = AnnotatorFactory.create_batch(2)
    _pooled(5)
    PooledTaskFactory(annotator=people[0], status=Task.Status.ASSIGNED)
    assignment.assign_tasks(manager, Phase.QUESTIONS, people, 4, fill_evenly=False)
    counts = [Task.objects.filter(annotator=p, status=Task.Status.ASSIGNED).count() for p in people]
    assert counts == [3, 2]


def test_assigning_in_bulk_skips_annotators_at_quota_or_unqualified(manager, outsider):
    capped = AnnotatorFactory()
    PhaseQuota.objects.create(annotator=capped, phase=Phase.QUESTIONS, limit=1)
    _pooled(4)
    handed = assignment.assign_tasks(manager, Phase.QUESTIONS, [capped, outsider], 4)
    assert len(handed[capped]) == 1 and handed[outsider] == []


def test_the_queue_overview_counts_each_phase(annotator):
    _pooled(3)
    assignment.next_task(annotator, Phase.QUESTIONS)
    p2 = assignment.queue_overview()[1]
    assert (p2["phase"], p2["waiting"], p2["in_progress"]) == (2, 2, 1)


def test_the_one_statement_claim_picks_what_the_pool_query_picks(db):
    from django.db import connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("the one-statement claim is PostgreSQL's")
    people = AnnotatorFactory.create_batch(3)
    _pooled(3)
    _pooled(2, phase=Phase.QUESTIONS, priority=1)
    touched = _pooled(1, priority=1)[0]
    Task.objects.create(
        phase=Phase.NORMALISATION, article=touched.article, annotator=people[0], status="submitted"
    )
    for person in people:
        with transaction.atomic():
            expected = assignment.claimable_pool(person, Phase.QUESTIONS).first()
            claimed = assignment._claim_in_one_statement(person, Phase.QUESTIONS)
        assert claimed == expected
        assert claimed.annotator == person and claimed.status == Task.Status.IN_PROGRESS


def test_the_same_article_rule_is_one_definition_in_every_form(annotator, second_annotator):
    # A released turn still counts: the annotator has seen the article.
    seen = _pooled(1)[0]
    Task.objects.create(
        phase=Phase.NORMALISATION,
        article=seen.article,
        annotator=annotator,
        status=Task.Status.RELEASED,
    )
    fresh = _pooled(1)[0]
    for person, article, touched in (
        (annotator, seen.article_id, True),
        (annotator, fresh.article_id, False),
        (second_annotator, seen.article_id, False),
    ):
        assert assignment.has_touched(person, article) is touched
        in_pool = assignment.claimable_pool(person, Phase.QUESTIONS).filter(article_id=article)
        assert in_pool.exists() is not touched
    # The one-statement claim's SQL is the ORM form compiled, with Task's statuses.
    sql = assignment._claim_sql()
    assert assignment._touched_articles_sql() in sql
    assert f"'{Task.Status.POOLED}'" in sql and f"'{Task.Status.IN_PROGRESS}'" in sql


def test_held_and_quota_statuses_are_named_once_on_the_task():
    assert set(Task.HELD_STATUSES) < set(Task.OPEN_STATUSES)
    assert set(Task.QUOTA_STATUSES) == {*Task.HELD_STATUSES, Task.Status.SUBMITTED}
    assert all(s in assignment._STANDING_SQL for s in Task.HELD_STATUSES)


def test_the_panels_standings_agree_with_the_one_phase_rules_on_both_statements(annotator):
    """phase_standings() reads every phase in one statement, PostgreSQL's own or the portable
    one SQLite runs: both must say what current_task(), quota_left() and the latest hand-in
    say, phase by phase, with ties on time broken by id."""
    from django.db import connection

    rng = random.Random(27)
    start = timezone.now() - datetime.timedelta(days=3)
    statuses = [Task.Status.ASSIGNED, Task.Status.IN_PROGRESS, Task.Status.SUBMITTED]
    statuses += [Task.Status.RELEASED, Task.Status.EXPIRED]
    for phase in (Phase.QUESTIONS, Phase.QUALITY_CHECK, Phase.POST_CONTROL):
        for _ in range(6):
            status = rng.choice(statuses)
            PooledTaskFactory(
                phase=phase,
                annotator=annotator,
                status=status,
                assigned_at=start + datetime.timedelta(hours=rng.randrange(3)),
                submitted_at=(
                    start + datetime.timedelta(hours=rng.randrange(3))
                    if status == Task.Status.SUBMITTED
                    else None
                ),
            )
    PooledTaskFactory.create_batch(2)  # someone else's work: not counted
    for phase, limit in ((Phase.NORMALISATION, 4), (Phase.QUESTIONS, 3), (Phase.DISPUTE, 1)):
        PhaseQuota.objects.create(annotator=annotator, phase=phase, limit=limit)

    expected = {}
    for phase in Phase.values:
        mine = Task.objects.filter(annotator=annotator, phase=phase)
        current = assignment.current_task(annotator, phase)
        last = (
            mine.filter(status=Task.Status.SUBMITTED, submitted_at__isnull=False)
            .order_by("-submitted_at", "-id")
            .first()
        )
        expected[phase] = {
            "done": mine.filter(status=Task.Status.SUBMITTED).count(),
            "held": mine.held().count(),
            "current_pk": current.pk if current else None,
            "last_submitted_pk": last.pk if last else None,
            "quota_left": assignment.quota_left(annotator, phase),
        }
    assert expected[Phase.QUESTIONS]["done"] and expected[Phase.QUESTIONS]["current_pk"]
    assert assignment.phase_standings(annotator) == expected
    for sql in assignment._STANDINGS_SQL:
        if "ARRAY_AGG" in sql and connection.vendor != "postgresql":
            continue
        with connection.cursor() as cursor:
            cursor.execute(sql, {"annotator": annotator.pk})
            found = {row[0]: row[1:] for row in cursor.fetchall()}
        for phase, standing in expected.items():
            done, held, current_pk, last_pk, _limit = found.get(phase, (0, 0, None, None, None))
            assert (done, held, current_pk, last_pk) == (
                standing["done"],
                standing["held"],
                standing["current_pk"],
                standing["last_submitted_pk"],
            ), (phase, sql)
