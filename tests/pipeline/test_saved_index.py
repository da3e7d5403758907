"""A BM25 index saved as arrays and mapped back: same scores, atomic generations."""

from datetime import date

import numpy as np

from pipeline.retrieval import BM25Index, fast_analyse
from pipeline.saved_index import CURRENT, SavedIndex, current_generation, save_index

TEXTS = [
    "The council spent money on parks and playgrounds",
    "Parks budget rose; the council said parks matter",
    "A library opened in the town centre",
    "Playgrounds and parks: the budget in figures",
    "",
]


def built() -> BM25Index:
    index = BM25Index(analyser=fast_analyse)
    index.add(TEXTS[:3], keys=[10, 11, 12], dates=[date(2020, 1, 1), None, date(2021, 5, 5)])
    index.add(TEXTS[3:], keys=[13, 14])
    return index


def test_a_mapped_saved_index_scores_every_document_exactly_as_the_one_in_memory(tmp_path):
    index = built()
    save_index(index, tmp_path)
    saved = SavedIndex.load(tmp_path, analyser=fast_analyse)
    for query in ("parks", "council parks parks", "library town", "nothing here"):
        terms = fast_analyse(query)
        assert np.array_equal(saved.scores(terms), index.scores(terms))
    assert isinstance(saved.data, np.memmap)
    assert list(saved.keys) == [10, 11, 12, 13, 14]


def test_the_date_mask_keeps_earlier_and_undated_documents(tmp_path):
    save_index(built(), tmp_path)
    saved = SavedIndex.load(tmp_path, analyser=fast_analyse)
    assert list(saved.allowed_before(date(2021, 5, 5))) == [True, True, False, True, True]


def test_documents_added_to_a_reloaded_index_score_as_in_one_built_at_once(tmp_path):
    save_index(built(), tmp_path)
    grown = SavedIndex.load(tmp_path, analyser=fast_analyse).to_index()
    grown.add(["More parks for the council"], keys=[15])
    at_once = BM25Index(analyser=fast_analyse)
    at_once.add([*TEXTS, "More parks for the council"])
    terms = fast_analyse("council parks")
    assert np.array_equal(grown.scores(terms), at_once.scores(terms))


def test_each_save_is_a_new_generation_and_old_ones_are_cleared(tmp_path):
    names = [save_index(built(), tmp_path) for _ in range(4)]
    assert current_generation(tmp_path) == names[-1]
    assert (tmp_path / CURRENT).read_text().strip() == names[-1]
    folders = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert folders == names[-2:]  # the one before stays for readers not yet reloaded
    assert SavedIndex.load(tmp_path / "elsewhere") is None
