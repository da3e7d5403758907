"""A manager's batch of articles travels through all five phases into the dataset export."""

import io
import json

from django.core.management import call_command

from annotation.models import Article, Claim, Task
from annotation.vocabulary import Verdict
from tests import steps
from tests.factories import AnnotatorFactory


def test_two_articles_go_from_intake_to_accepted_claims_with_five_annotators_each(
    tmp_path, manager
):
    intake = tmp_path / "week-44.jsonl"
    intake.write_text(
        "\n".join(
            json.dumps({"url": f"https://fullfact.org/online/story-{n}/", "title": f"Story {n}"})
            for n in (1, 2)
        )
    )
    call_command("import_articles", intake, stdout=io.StringIO())
    assert Task.objects.filter(phase=1, status=Task.Status.POOLED).count() == 2

    crew = AnnotatorFactory.create_batch(10)
    first, second = crew[:5], crew[5:]
    (one,) = steps.normalise(first[0], [steps.normalised_claim("Story one's claim.")])
    (two,) = steps.normalise(second[0], [steps.normalised_claim("Story two's claim.")])
    assert one.article != two.article

    # Both claims are disputed (P2 and P3 disagree) so both pass all five phases.
    for team, p2, p3, p4, p5 in (
        (first, Verdict.SUPPORTED, Verdict.REFUTED, Verdict.REFUTED, Verdict.REFUTED),
        (
            second,
            Verdict.REFUTED,
            Verdict.NOT_ENOUGH_EVIDENCE,
            Verdict.SUPPORTED,
            Verdict.SUPPORTED,
        ),
    ):
        steps.answer(team[1], p2)
        steps.check(team[2], p3)
        steps.resolve(team[3], p4)
        steps.post_control(team[4], p5)

    for claim, team in ((one, first), (two, second)):
        claim.refresh_from_db()
        assert claim.state == Claim.State.ACCEPTED
        who = list(claim.article.tasks.order_by("phase").values_list("phase", "annotator"))
        assert who == [(phase, person.pk) for phase, person in enumerate(team, start=1)]
    assert Article.objects.filter(state=Article.State.NORMALISED).count() == 2

    out = tmp_path / "dataset.json"
    call_command("export_dataset", "--out", out, stdout=io.StringIO())
    records = {r["claim"]: r for r in json.loads(out.read_text())}
    assert [records[c]["label"] for c in ("Story one's claim.", "Story two's claim.")] == [
        "Refuted",
        "Supported",
    ]
    assert all(r["required_reannotation"] is True for r in records.values())
    assert all(len(r["questions"]) == 3 for r in records.values())  # P4's revised pairs
    assert records["Story one's claim."]["fact_checking_article"].endswith("story-1/")
    assert records["Story one's claim."]["claim_date"] == "31-10-2020"
