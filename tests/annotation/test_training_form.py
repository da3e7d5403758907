"""The training form takes its text lengths from the one table (TEXT_LIMITS), as the real
P2 editor does."""

from __future__ import annotations

from annotation.forms.training import TrainingForm
from annotation.submissions import TEXT_LIMITS
from annotation.vocabulary import Phase


def test_training_pairs_are_limited_as_real_questions_and_answers_are():
    form = TrainingForm(Phase.QUESTIONS)
    assert form.fields["question_0"].max_length == TEXT_LIMITS["question"]
    assert form.fields["answer_0"].max_length == TEXT_LIMITS["answer"]


def test_a_training_answer_as_long_as_a_real_one_may_be_is_accepted():
    data = {
        "question_0": "How much?",
        "answer_0": "x" * TEXT_LIMITS["answer"],
        "verdict": "Refuted",
    }
    assert TrainingForm(Phase.QUESTIONS, data).is_valid()
    too_long = {**data, "answer_0": "x" * (TEXT_LIMITS["answer"] + 1)}
    assert "answer_0" in TrainingForm(Phase.QUESTIONS, too_long).errors
