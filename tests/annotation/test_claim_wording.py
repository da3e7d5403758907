from datetime import date

import pytest

from annotation.dates import DateNotUnderstood, earliest_date
from annotation.wording import wording_warnings


@pytest.mark.parametrize(
    ("written", "earliest"),
    [
        ("February 2017", date(2017, 2, 1)),
        ("Feb 2017", date(2017, 2, 1)),
        ("2016", date(2016, 1, 1)),
        ("early March 2019", date(2019, 3, 1)),
        ("late 2018", date(2018, 1, 1)),
        ("3 February 2017", date(2017, 2, 3)),
        ("February 3rd, 2017", date(2017, 2, 3)),
        ("2017-02-03", date(2017, 2, 3)),
        ("3/2/2017", date(2017, 2, 3)),
        ("the 1990s", date(1990, 1, 1)),
        ("summer 2020", date(2020, 6, 1)),
        ("March to April 2020", date(2020, 3, 1)),
        ("March-April 2020", date(2020, 3, 1)),
    ],
)
def test_imprecise_dates_take_their_earliest_reading(written, earliest):
    assert earliest_date(written) == earliest


@pytest.mark.parametrize("written", ["", "yesterday", "31 February 2020", "March"])
def test_dates_that_cannot_be_read_say_so(written):
    with pytest.raises(DateNotUnderstood):
        earliest_date(written)


@pytest.mark.parametrize(
    ("claim", "speaker", "hint"),
    [
        ("Did a strike hinder aid in Puerto Rico?", None, "question"),
        ("Is the river polluted", None, "question"),
        ("Says Monica Lewinsky was found dead.", None, "Says"),
        ("We have 21 million unemployed young people.", None, '"We"'),
        ("They closed every school in 2020.", None, '"They"'),
        ("It is the largest dam in Africa.", None, '"It"'),
        ('The mayor said "we will build ten parks".', None, "quote"),
        ("The mayor said 'we will build ten parks'.", "", "quote"),
    ],
)
def test_wording_problems_get_a_hint(claim, speaker, hint):
    hints = wording_warnings(claim, speaker)
    assert len(hints) == 1
    assert hint in hints[0]


@pytest.mark.parametrize(
    ("claim", "speaker"),
    [
        ("Nigeria has 21 million unemployed young people.", None),
        ('The mayor said "we will build ten parks".', "Mayor Jane Doe"),
        ("Itaipu is the largest dam in South America.", None),
        ("Theresa May resigned in 2019.", None),
        ("Wheat prices rose by 10% in 2020.", None),
    ],
)
def test_well_formed_claims_get_no_hints(claim, speaker):
    assert wording_warnings(claim, speaker) == []
