"""Migration 0009: search logs keep their task and claim ids when the foreign keys go.

Migrations have run on real databases, so the test walks the step on a database that holds
rows: back to 0008 (foreign keys, with their constraints), then forward again.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from search_proxy.models import SearchClick, SearchLog
from tests.search_proxy.conftest import CLAIM_DATE

BEFORE = ("search_proxy", "0008_fact_check_rules")
AFTER = ("search_proxy", "0009_search_logs_keep_plain_ids")


def _migrate(target: tuple[str, str]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()
    return executor


def _foreign_keys(table: str) -> dict[str, tuple[str, str]]:
    """column -> (table, column) it must point at, as the database enforces it."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return {
        info["columns"][0]: info["foreign_key"]
        for info in constraints.values()
        if info["foreign_key"]
    }


@pytest.mark.django_db(transaction=True)
def test_the_ids_the_foreign_keys_held_stay_and_only_the_constraints_go(p2_task, annotator):
    log = SearchLog.objects.create(
        user=annotator,
        task_id=p2_task.pk,
        claim_id=p2_task.claim_id,
        query="parks budget",
        before=CLAIM_DATE,
        backend="local",
    )
    click = SearchClick.objects.create(
        user=annotator, task_id=p2_task.pk, search=log, url="https://a.example/"
    )
    try:
        old = _migrate(BEFORE).loader.project_state([BEFORE]).apps
        old_log = old.get_model("search_proxy", "SearchLog").objects.get(pk=log.pk)
        assert (old_log.task_id, old_log.claim_id) == (p2_task.pk, p2_task.claim_id)
        assert _foreign_keys("search_proxy_searchlog")["task_id"] == ("annotation_task", "id")
        assert _foreign_keys("search_proxy_searchclick")["task_id"] == ("annotation_task", "id")

        _migrate(AFTER)
    finally:
        MigrationExecutor(connection).migrate([AFTER])

    log.refresh_from_db()
    click.refresh_from_db()
    assert (log.task_id, log.claim_id, click.task_id) == (p2_task.pk, p2_task.claim_id, p2_task.pk)
    assert set(_foreign_keys("search_proxy_searchlog")) == {"user_id"}
    assert set(_foreign_keys("search_proxy_searchclick")) == {"user_id", "search_id"}
