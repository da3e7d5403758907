"""Agreement figures read from the workflow's rounds, and the evidence agreement's scorer."""

import json

import pytest

from annotation.models import Claim
from review.agreement import (
    ReportFilter,
    agreement_report,
    evidence_agreement_of_records,
    verdict_ratings,
)


def test_the_three_claims_went_through_as_planned(agreement_claims):
    assert [c.state for c in agreement_claims] == [Claim.State.ACCEPTED] * 3
    assert [c.required_reannotation for c in agreement_claims] == [False, False, True]


def test_parallel_p2_verdicts_are_the_headline_figures(agreement_claims):
    report = agreement_report(evidence=False)

    # Items (R,R), (S,R), (R,S): one agreeing claim of three. Label shares 4/6 and 2/6 give
    # Fleiss' chance 5/9: (1/3 - 5/9) / (4/9) = -1/2; Randolph over four labels:
    # (1/3 - 1/4) / (3/4) = 1/9.
    assert report["items"] == 3
    assert report["percent_agreement"] == pytest.approx(1 / 3)
    assert report["fleiss_kappa"] == pytest.approx(-0.5)
    assert report["randolph_kappa"] == pytest.approx(1 / 9)
    parallel = report["verdicts"]["parallel_p2"]
    assert {r.annotator for r in verdict_ratings("parallel_p2", ReportFilter().claims())} == {
        "crew1",
        "crew2",
    }
    assert parallel["raters_per_item"] == {"2": 3}


def test_each_p3_is_compared_with_the_p2_it_checked_and_p5_with_p4(agreement_claims):
    report = agreement_report(evidence=False)

    # P2/P3 pairs, the sample track its own item: RR RR SS RN RS SS: four of six agree.
    assert report["verdicts"]["p2_p3"]["items"] == 6
    assert report["verdicts"]["p2_p3"]["percent_agreement"] == pytest.approx(4 / 6)
    assert report["verdicts"]["p4_p5"]["items"] == 1
    assert report["verdicts"]["p4_p5"]["percent_agreement"] == 1
    # Every P2 and P3 of a claim together: four raters on each claim.
    assert report["verdicts"]["first_round"]["raters_per_item"] == {"4": 3}


def test_confusion_matrices_set_the_fact_checker_label_against_p2(agreement_claims):
    confusion = {c["key"]: c for c in agreement_report(evidence=False)["confusion"]}

    labels = confusion["p1_p2"]["labels"]
    refuted_row = confusion["p1_p2"]["matrix"][labels.index("Refuted")]
    assert refuted_row[labels.index("Refuted")] == 2
    assert refuted_row[labels.index("Supported")] == 1
    assert confusion["p4_p5"]["total"] == 1
    assert "Claim too vague" in confusion["p4_p5"]["labels"]


def test_a_filter_keeps_claims_of_other_batches_out(agreement_claims):
    report = agreement_report(ReportFilter(batch_id=999_999), evidence=False)

    assert report["items"] == 0
    assert report["randolph_kappa"] is None


def test_evidence_agreement_compares_the_two_qa_sets_of_sampled_claims(agreement_claims):
    evidence = agreement_report()["evidence"]

    # steps.evidence gives both rounds the same two questions: near-perfect METEOR.
    assert evidence["claims"] == 3
    assert evidence["q_only"] > 0.99
    assert evidence["q_and_a"] > 0.99


def test_evidence_agreement_on_the_parallel_files_equals_the_official_evaluation(averitec_dir):
    # Computed by the official eval.py (MichSchli/AVeriTeC, commit 2178d0b) run from /tmp with
    # --predictions filtered_parallel_src.json --references filtered_parallel_tgt.json, with
    # NLTK 3.10.4 and the project's NLTK data: it printed these two numbers.
    first = json.loads((averitec_dir / "filtered_parallel_src.json").read_text())
    second = json.loads((averitec_dir / "filtered_parallel_tgt.json").read_text())

    evidence = evidence_agreement_of_records(first, second)

    assert evidence["claims"] == 83
    assert evidence["q_only"] == pytest.approx(0.28995175647762905, abs=1e-9)
    assert evidence["q_and_a"] == pytest.approx(0.2367375497261104, abs=1e-9)
