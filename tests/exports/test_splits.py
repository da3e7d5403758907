"""Temporal splits and the export's filters (split, batch, claim-date range, JSON lines)."""

from __future__ import annotations

import json
import tracemalloc
from datetime import date
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from annotation.models import Batch
from exports.dataset import write_export
from exports.splits import DEV, TEST, TRAIN, Selection, SplitBoundaries
from tests.factories import AcceptedClaimFactory, ArticleFactory

RELEASE = SplitBoundaries(train_end=date(2020, 8, 25), dev_end=date(2020, 10, 31))


@pytest.mark.parametrize(
    ("day", "split"),
    [
        (date(2019, 1, 1), TRAIN),
        (date(2020, 8, 25), TRAIN),  # an end date belongs to its split
        (date(2020, 8, 26), DEV),
        (date(2020, 10, 31), DEV),
        (date(2020, 11, 1), TEST),
        (date(2021, 12, 22), TEST),
    ],
)
def test_a_claim_date_falls_in_one_split(day, split):
    assert RELEASE.split_of(day) == split


def test_the_default_boundaries_are_the_releases(settings):
    assert SplitBoundaries.from_settings() == RELEASE


def test_every_dev_json_claim_is_in_the_dev_split(dev_records):
    from exports.averitec_json import parse_claim_date

    assert {RELEASE.split_of(parse_claim_date(r["claim_date"])) for r in dev_records} == {DEV}


@pytest.fixture
def dated_claims(db):
    """One accepted claim on each side of each boundary, in two batches."""
    first, second = (
        Batch.objects.create(name="first", kind="intake"),
        Batch.objects.create(name="second", kind="intake"),
    )
    days = [date(2020, 8, 25), date(2020, 8, 26), date(2020, 10, 31), date(2020, 11, 1)]
    claims = {}
    for n, day in enumerate(days):
        article = ArticleFactory(batch=first if n % 2 == 0 else second)
        claims[day] = AcceptedClaimFactory(article=article, claim_date=day, text=f"Claim of {day}.")
    return claims


def _exported(path: Path) -> list[str]:
    return [r["claim"] for r in json.loads(path.read_text(encoding="utf-8"))]


@pytest.mark.parametrize(
    ("split", "expected"),
    [
        ("train", ["2020-08-25"]),
        ("dev", ["2020-08-26", "2020-10-31"]),
        ("test", ["2020-11-01"]),
    ],
)
def test_export_of_a_split_holds_the_claims_dated_inside_it(
    dated_claims, run_export, tmp_path, split, expected
):
    out = tmp_path / "split.json"

    output = run_export(out, "--split", split)

    assert sorted(_exported(out)) == [f"Claim of {day}." for day in expected]
    assert f"({split} split)" in output


def test_split_boundaries_come_from_the_settings(dated_claims, run_export, tmp_path, settings):
    settings.EXPORT_TRAIN_END = date(2020, 10, 30)
    out = tmp_path / "train.json"

    run_export(out, "--split", "train")

    assert sorted(_exported(out)) == ["Claim of 2020-08-25.", "Claim of 2020-08-26."]


def test_export_of_a_batch_and_a_date_range(dated_claims, run_export, tmp_path):
    out = tmp_path / "filtered.json"

    run_export(out, "--batch", "second", "--since", "2020-08-26", "--until", "2020-10-31")

    assert _exported(out) == ["Claim of 2020-08-26."]


def test_an_unknown_batch_or_a_backwards_range_is_refused(dated_claims, run_export, tmp_path):
    with pytest.raises(CommandError, match="no batch named 'third'"):
        run_export(tmp_path / "x.json", "--batch", "third")
    with pytest.raises(CommandError, match="--since is after --until"):
        run_export(tmp_path / "x.json", "--since", "2020-10-01", "--until", "2020-09-01")
    with pytest.raises(CommandError, match="expected a date like 2020-10-31"):
        run_export(tmp_path / "x.json", "--since", "1-9-2020")


def test_json_lines_export_of_a_split(dated_claims, run_export, tmp_path):
    out = tmp_path / "dev.jsonl"

    run_export(out, "--split", "dev", "--format", "jsonl")

    lines = out.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["claim"] for line in lines) == [
        "Claim of 2020-08-26.",
        "Claim of 2020-10-31.",
    ]


def test_a_selection_describes_itself(dated_claims):
    batch = Batch.objects.get(name="first")
    selection = Selection(split="dev", batch=batch, since=date(2020, 9, 1))
    assert selection.describe() == "dev split, batch first, claim dates 2020-09-01 to …"
    assert list(selection.claims(RELEASE)) == [dated_claims[date(2020, 10, 31)]]


def test_the_export_streams_with_flat_memory(dev_json, run_import, tmp_path):
    """Peak memory while writing does not grow with the number of claims: records are built
    and written a chunk of claims at a time."""
    run_import(dev_json)
    from annotation.models import Claim

    def peak(limit: int) -> tuple[int, int]:
        ids = list(Claim.objects.order_by("dataset_position").values_list("id", flat=True)[:limit])
        out = tmp_path / f"export-{limit}.json"
        tracemalloc.start()
        write_export(out, queryset=Claim.objects.filter(id__in=ids))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top, out.stat().st_size

    small_peak, small_size = peak(200)  # one chunk of export_records
    big_peak, big_size = peak(500)

    assert big_size > 2 * small_size
    assert big_peak < 1.3 * small_peak, (small_peak, big_peak)  # 2.5x the claims, not the memory
