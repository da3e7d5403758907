import pytest


@pytest.fixture(autouse=True)
def _progress_computed_per_request(settings):
    # Most reporting tests change tasks and read the figures again at once: progress is
    # computed on each request unless a test turns its storing on.
    settings.REPORT_PROGRESS_MAX_AGE = 0
