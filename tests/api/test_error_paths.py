"""Field errors of the API keep every problem, whatever paths the rules report them at."""

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from annotation.serializers import nested_errors


@dataclass
class Problem:
    path: str
    message: str


def flattened(errors) -> list[str]:
    if isinstance(errors, list):
        return list(errors)
    return [message for value in errors.values() for message in flattened(value)]


segments = st.sampled_from(["questions", "0", "1", "answers", "source_url", "verdict"])
paths = st.lists(segments, min_size=1, max_size=4).map(".".join)


@given(st.lists(paths, max_size=12))
def test_every_problem_reaches_the_answer_whatever_its_path(problem_paths):
    problems = [Problem(path, f"problem {n}") for n, path in enumerate(problem_paths)]
    assert sorted(flattened(nested_errors(problems))) == sorted(p.message for p in problems)


def test_a_problem_with_a_question_and_one_with_its_answer_are_both_kept():
    """Reported by the schema fuzzer: the second path went through the first one's list (500)."""
    errors = nested_errors(
        [
            Problem("questions.0", "This question repeats another."),
            Problem("questions.0.answers.0.source_url", "This address is a fact-check."),
        ]
    )
    assert errors == {
        "questions": {
            "0": {
                "non_field_errors": ["This question repeats another."],
                "answers": {"0": {"source_url": ["This address is a fact-check."]}},
            }
        }
    }
