"""`manage.py agreement_report`: the platform's figures, or an outside ratings table."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def _run(*args) -> str:
    out = StringIO()
    call_command("agreement_report", *args, stdout=out, verbosity=0)
    return out.getvalue()


def test_a_ratings_table_gives_the_kappas_as_json(tmp_path):
    # Randolph-style check by hand: 3 items x 2 raters, 2 labels; items 1 and 2 agree.
    # P_o = 2/3; Randolph (2/3 - 1/2) / (1/2) = 1/3. Labels: yes 3, no 3 of 6, so
    # Fleiss' chance is 1/2 as well: 1/3.
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,label\n1,a,yes\n1,b,yes\n2,a,no\n2,b,no\n3,a,yes\n3,b,no\n")

    report = json.loads(_run("--ratings", str(ratings), "--json"))

    assert report["items"] == 3
    assert report["percent_agreement"] == pytest.approx(2 / 3)
    assert report["randolph_kappa"] == pytest.approx(1 / 3)
    assert report["fleiss_kappa"] == pytest.approx(1 / 3)
    assert report["intervals"]["randolph_kappa"] is not None


def test_more_categories_than_labels_seen_change_randolphs_chance(tmp_path):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,label\n1,a,yes\n1,b,yes\n2,a,no\n2,b,no\n3,a,yes\n3,b,no\n")

    report = json.loads(_run("--ratings", str(ratings), "--json", "--categories", "4"))

    # (2/3 - 1/4) / (3/4) = 5/9
    assert report["randolph_kappa"] == pytest.approx(5 / 9)


def test_a_bad_ratings_file_names_the_line(tmp_path):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,label\n1,a,yes\n1,b\n")

    with pytest.raises(CommandError, match="line 3: expected 3 columns"):
        _run("--ratings", str(ratings), "--json")


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        _run("--ratings", str(tmp_path / "nope.csv"))


def test_the_platform_report_prints_the_dashboards_figures(agreement_claims):
    report = json.loads(_run("--json", "--no-evidence"))
    text = _run("--no-evidence")

    assert report["randolph_kappa"] == pytest.approx(1 / 9)
    assert report["progress"]["outcomes"]["reannotated"] == 1
    assert "Independent P2 verdicts (agreement sample):" in text
    assert "stuck tasks: 0" in text


def test_an_unknown_batch_is_refused(db):
    with pytest.raises(CommandError, match="no batch called 'nope'"):
        _run("--batch", "nope")
