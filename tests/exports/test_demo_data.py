import json

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
    waiting = Article.objects.filter(state=Article.State.AWAITING_NORMALISATION)
    assert waiting.exists()
    assert all(a.claimreview_date >= latest_accepted for a in waiting)
    assert User.objects.filter(role=User.Role.MANAGER).count() == 1
    assert User.objects.filter(role=User.Role.ANNOTATOR).count() == 6
    # The search index (as scripts/demo.sh fills it) holds the evidence pages of the
    # accepted claims only: a waiting claim must not find its own gold answers.
    call_command("index_documents", "--from-dataset", verbosity=0)
    from annotation.models import Answer
    from search_proxy.models import Document

    indexed = set(Document.objects.values_list("normalized_url", flat=True))
    accepted_pages = set(
        Answer.objects.filter(question__evidence_round__claim__state=Claim.State.ACCEPTED)
        .exclude(source=None)
        .values_list("source__normalized_url", flat=True)
    )
    assert len(indexed) > 50
    assert indexed <= accepted_pages
    waiting_answers = {
        " ".join(a["answer"].split())
        for record in json.loads(dev_json.read_text())
        if record["claim"] not in set(accepted.values_list("text", flat=True))
        for q in record["questions"]
        for a in q["answers"]
        if len(a.get("answer") or "") > 40
    }
    texts = "\n".join(Document.objects.values_list("text", flat=True))
    own_answers = {a for a in waiting_answers if a in texts}
    # Only answers an accepted claim shares (the same page cited twice) may be there.
    assert len(own_answers) < 0.05 * len(waiting_answers)


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
