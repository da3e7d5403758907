"""Who may take real tasks: managers and blind phases, qualification from training."""

import pytest

from annotation import assignment
from annotation.vocabulary import Phase
from tests import steps


def test_a_manager_takes_no_blind_task_by_default_whatever_their_phases(manager, annotator):
    steps.new_article()
    steps.normalise(annotator)

    assert manager.qualified_phases == [1, 2, 3, 4, 5]
    assert manager.is_qualified_for(Phase.QUESTIONS)
    assert not manager.is_qualified_for(Phase.QUALITY_CHECK)
    assert not manager.is_qualified_for(Phase.POST_CONTROL)
    with pytest.raises(assignment.NoTaskAvailable, match="not qualified for phase 3"):
        assignment.next_task(manager, Phase.QUALITY_CHECK)


def test_a_setting_lets_managers_take_blind_tasks(manager, settings):
    settings.MANAGERS_TAKE_BLIND_TASKS = True

    assert manager.is_qualified_for(Phase.QUALITY_CHECK)
