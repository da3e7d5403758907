"""One definition of every agreement figure (issue 24, item 6): k printed with every kappa on
every surface, the bootstrap over claims and independent of input order, and items rated once
counted as left out."""

import json
import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from review.agreement import (
    POST_CONTROL_VERDICTS,
    VERDICTS,
    ReportFilter,
    agreement_report,
    verdict_ratings,
)
from review.kappa import Rating, count_table, verdict_agreement

LABELS = VERDICTS


def random_ratings(seed: int, items: int = 14, labels=LABELS) -> list[Rating]:
    rng = random.Random(seed)
    ratings = []
    for item in range(1, items + 1):
        truth = rng.choice(labels)
        for rater in rng.sample(range(6), 2):
            label = truth if rng.random() < 0.7 else rng.choice(labels)
            ratings.append(Rating(str(item), f"r{rater}", label, str(item)))
    return ratings


def figures_of(ratings, labels=LABELS) -> dict:
    result = verdict_agreement(ratings, labels, min_pair_overlap=1)
    result.pop("annotator_pairs")  # their order follows the names, not the kappa
    return result


@pytest.mark.parametrize("seed", range(8))
def test_the_interval_does_not_depend_on_the_order_of_the_ratings(seed):
    ratings = random_ratings(seed, labels=POST_CONTROL_VERDICTS)
    shuffled = ratings[:]
    random.Random(seed + 100).shuffle(shuffled)

    assert figures_of(shuffled, POST_CONTROL_VERDICTS) == figures_of(ratings, POST_CONTROL_VERDICTS)


def test_items_are_put_in_one_order_with_numbers_compared_as_numbers():
    ratings = [Rating(i, a, "Refuted") for i in ("10", "9", "2-sample", "2") for a in "ab"]

    assert count_table(ratings, LABELS).items == ["2", "2-sample", "9", "10"]


def test_the_bootstrap_draws_claims_so_a_claim_with_two_tracks_is_still_one_claim():
    ratings = random_ratings(3)
    # The same verdicts again as a second track of each claim (as P2 vs P3 has for sampled
    # claims): drawing claims, the figures and the interval do not change.
    twice = ratings + [Rating(f"{r.item}-sample", r.annotator, r.label, r.cluster) for r in ratings]
    # Drawing tracks as if they were independent would narrow the interval: wrong.
    as_tracks = [Rating(r.item, r.annotator, r.label) for r in twice]

    once, by_claim, by_track = figures_of(ratings), figures_of(twice), figures_of(as_tracks)

    assert by_claim["intervals"] == once["intervals"]
    assert by_claim["bootstrap"]["unit"] == "claim" and by_claim["bootstrap"]["units"] == 14
    low, high = by_track["intervals"]["randolph_kappa"]
    assert (
        high - low < once["intervals"]["randolph_kappa"][1] - once["intervals"]["randolph_kappa"][0]
    )


def test_items_rated_once_are_counted_as_left_out():
    ratings = [*random_ratings(5), Rating("99", "r1", "Supported"), Rating("98", "r2", "Refuted")]

    result = figures_of(ratings)

    assert (result["items"], result["left_out"]) == (14, 2)


def test_k_is_the_labels_the_raters_could_choose_in_every_comparison(agreement_claims):
    report = agreement_report(evidence=False)

    assert {key: v["k"] for key, v in report["verdicts"].items()} == {
        "parallel_p2": 4,
        "p2_p3": 4,
        "p4_p5": 5,
        "first_round": 4,
    }


def test_the_dashboard_the_csv_the_api_and_the_command_all_print_k(
    client, manager, agreement_claims
):
    client.force_login(manager)

    page = client.get(reverse("review:dashboard")).content.decode()
    csv_text = client.get(reverse("review:dashboard-csv", args=["agreement"])).content.decode()
    api = client.get("/api/v1/agreement/").json()
    out = StringIO()
    call_command("agreement_report", "--no-evidence", stdout=out, verbosity=0)

    assert "s kappa (k = 4 labels)" in page
    assert "(k=5)" in page  # the P4 vs P5 bar of the chart
    assert csv_text.splitlines()[0].startswith("comparison,k,items,left_out_rated_once")
    assert api["verdicts"]["p4_p5"]["k"] == 5
    assert "k = 5 labels" in out.getvalue() and "randolph kappa (k=4)" in out.getvalue()


def test_the_same_ratings_give_the_same_figures_on_the_dashboard_and_from_a_csv(
    tmp_path, agreement_claims
):
    """The reported case: the command took k from the labels found in the file and the
    interval from the file's order, so the same ratings printed other figures."""
    for key, labels in (("p2_p3", VERDICTS), ("p4_p5", POST_CONTROL_VERDICTS)):
        ratings = verdict_ratings(key, ReportFilter().claims())
        platform = agreement_report(evidence=False)["verdicts"][key]
        rows = [f"{r.item},{r.annotator},{r.label},{r.cluster}" for r in ratings]
        random.Random(1).shuffle(rows)
        path = tmp_path / f"{key}.csv"
        path.write_text("item,annotator,label,claim\n" + "\n".join(rows) + "\n")
        out = StringIO()
        # P5 could also call a claim too vague: k = 5, which the file alone cannot show
        # when nobody did; the command takes the platform's 4 unless told.
        k = ["--categories", "5"] if key == "p4_p5" else []
        call_command("agreement_report", "--ratings", str(path), "--json", *k, stdout=out)
        from_file = json.loads(out.getvalue())

        for name in ("k", "items", "left_out", "randolph_kappa", "fleiss_kappa", "intervals"):
            assert from_file[name] == platform[name], (key, name)
        assert platform["k"] == len(labels)
