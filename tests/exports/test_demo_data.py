from django.core.management import call_command

from annotation.models import Article, Claim, User


def test_the_demo_accepts_the_400_earliest_claims_and_queues_the_other_articles(
    dev_json, tmp_path, db
):
    accounts = tmp_path / "accounts.txt"
    call_command("seed_demo", "--dataset", dev_json, "--accounts-file", accounts)
    accepted = Claim.objects.accepted()
    assert accepted.count() == 400
    latest_accepted = max(accepted.values_list("claim_date", flat=True))
    waiting = Article.objects.awaiting_normalisation()
    assert waiting.exists()
    assert all(a.claimreview_date >= latest_accepted for a in waiting)
    assert User.objects.filter(role=User.Role.MANAGER).count() == 1
    assert User.objects.filter(role=User.Role.ANNOTATOR).count() == 6
    # The evidence pages of the waiting claims are searchable for Phase 2.
    from search_proxy.models import Document

    demo_pages = Document.objects.filter(corpus="demo")
    assert demo_pages.count() > 50
    assert all(d.text for d in demo_pages[:20])


def test_the_demo_passwords_it_prints_let_people_sign_in(tmp_path, db, client):
    accounts = tmp_path / "accounts.txt"
    call_command("seed_demo", "--dataset", tmp_path / "missing.json", "--accounts-file", accounts)
    name, password = accounts.read_text().splitlines()[1].split(" ")
    response = client.post("/login/", {"username": name, "password": password})
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_running_the_demo_set_up_again_keeps_data_and_passwords(tmp_path, db):
    accounts = tmp_path / "accounts.txt"
    call_command("seed_demo", "--dataset", tmp_path / "missing.json", "--accounts-file", accounts)
    first = (Claim.objects.count(), Article.objects.count(), accounts.read_text())
    call_command("seed_demo", "--dataset", tmp_path / "missing.json", "--accounts-file", accounts)
    assert (Claim.objects.count(), Article.objects.count(), accounts.read_text()) == first
    assert Claim.objects.accepted().count() > 0
