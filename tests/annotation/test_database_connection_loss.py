"""The database may drop the app's connections (a restart, a failover, an administrator's
pg_terminate_backend). Web processes keep connections between requests, so the next request
on each of them must notice and reconnect instead of answering 500."""

import psycopg
import pytest
from django.db import close_old_connections, connection

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture
def postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("pg_terminate_backend is PostgreSQL's")


def _terminate(pid: int) -> None:
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_the_request_after_a_dropped_connection_reconnects(postgres_only):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    _terminate(pid)
    # What Django does when the next request starts on this process's persistent connection.
    close_old_connections()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (new_pid,) = cursor.fetchone()
    assert new_pid != pid
