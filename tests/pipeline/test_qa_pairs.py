"""Which trainee QA pairs are real: length, no echo of the claim, METEOR against the gold."""

from pipeline import qa_pairs
from pipeline.text import meteor

CLAIM = "The city council spent 9 million on new parks in 2019."
GOLD = [
    "How much did the council spend on parks in 2019? 2.1 million pounds",
    "Who approved the parks budget? The finance committee in March",
]


def judge(*pairs: tuple[str, str]) -> list[qa_pairs.PairJudgement]:
    return qa_pairs.judge_pairs(list(pairs), GOLD, meteor, claim=CLAIM)


def test_the_reported_junk_pairs_do_not_count():
    judged = judge(("x?", "y"), ("z?", "w"))

    assert [j.real for j in judged] == [False, False]
    assert all("at least 3 words" in j.why for j in judged)


def test_a_pair_close_to_a_gold_pair_counts_and_a_short_boolean_answer_is_an_answer():
    judged = judge(
        ("How much money did the council spend on parks in 2019?", "2.1 million"),
        ("Did the finance committee approve the parks budget?", "No"),
    )

    assert [j.real for j in judged] == [True, True]
    assert judged[0].meteor >= qa_pairs.METEOR_THRESHOLD


def test_the_same_good_pair_twice_counts_once():
    pair = ("How much did the council spend on parks in 2019?", "2.1 million pounds")

    judged = qa_pairs.judge_pairs([pair, pair, pair], GOLD[:1], meteor, claim=CLAIM)

    assert sum(j.real for j in judged) == 1
    assert "matched none" in judged[1].why + judged[2].why


def test_a_question_that_only_repeats_the_claim_does_not_count():
    judged = judge((f"Is it true that {CLAIM.rstrip('.')}?", "Yes"))

    assert judged[0].real is False and judged[0].why == "the question only repeats the claim"


def test_a_generic_pair_that_fits_any_claim_is_too_far_from_the_gold():
    judged = judge(("What is the answer to this question?", "Yes it is"))

    assert judged[0].real is False and "too far" in judged[0].why
