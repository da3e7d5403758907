"""Every search_proxy model has a working admin page; records of searches are read-only."""

import pytest
from django.urls import reverse

from search_proxy.models import MisinformationDomain, SearchLog
from tests.factories import ManagerFactory
from tests.search_proxy.conftest import CLAIM_DATE

pytestmark = pytest.mark.django_db

MODELS = [
    "source",
    "document",
    "misinformationdomain",
    "factcheckingdomain",
    "searchlog",
    "searchclick",
    "fetchedpage",
]


@pytest.fixture
def admin_client(client):
    client.force_login(ManagerFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize("model", MODELS)
def test_each_model_has_an_admin_list(admin_client, model):
    assert admin_client.get(reverse(f"admin:search_proxy_{model}_changelist")).status_code == 200


def test_a_manager_adds_a_misinformation_domain_in_the_admin(admin_client):
    response = admin_client.post(
        reverse("admin:search_proxy_misinformationdomain_add"),
        {"domain": "WWW.Satire.Example", "path_prefix": "", "note": "", "origin": "admin"},
    )
    assert response.status_code == 302
    assert MisinformationDomain.objects.get().domain == "satire.example"


def test_search_logs_cannot_be_edited_in_the_admin(admin_client, annotator):
    log = SearchLog.objects.create(user=annotator, query="x", before=CLAIM_DATE, backend="local")
    assert admin_client.get(reverse("admin:search_proxy_searchlog_add")).status_code == 403
    page = admin_client.get(reverse("admin:search_proxy_searchlog_change", args=[log.pk]))
    assert page.status_code == 200 and b'name="query"' not in page.content
