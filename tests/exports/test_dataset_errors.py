"""A dataset file that cannot be imported and files that cannot be scored raise one exception
type (ScoringInputError); each keeps the heading that says which input was wrong."""

from __future__ import annotations

import io

import pytest

from exports.averitec_json import DatasetFormatError, load_dataset
from pipeline.scoring import ScoringInputError


def test_a_broken_dataset_file_is_a_scoring_input_error_headed_as_a_dataset_problem():
    with pytest.raises(ScoringInputError) as raised:
        load_dataset(io.StringIO("[1]"))
    assert isinstance(raised.value, DatasetFormatError)
    assert str(raised.value).startswith("1 problem(s) in the dataset file:\n  - record 0")


def test_files_to_score_keep_their_own_heading_and_count_what_is_not_listed():
    error = ScoringInputError(["line 3: not JSON"], total=4)
    assert str(error) == (
        "4 problem(s) with the files to score:\n  - line 3: not JSON\n  … and 3 more"
    )
