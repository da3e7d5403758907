"""annotation/phases.py: annotation reaches the blind checks, which are review's, by phase."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from annotation import phases
from annotation.serializers import SUBMIT_SERIALIZERS, submit_serializer
from annotation.views.editing import draft_parsers
from annotation.vocabulary import BLIND_PHASES, Phase
from review import checks, forms, views
from review.serializers import (
    PostControlSubmitSerializer,
    QualityCheckResultSerializer,
    QualityCheckSubmitSerializer,
)


def test_review_registers_the_blind_checks_when_django_starts():
    assert set(phases.registered()) == set(BLIND_PHASES)
    for phase in BLIND_PHASES:
        parts = phases.parts_of(phase)
        assert parts.screen is views.check_page
        assert parts.draft_from_post is forms.draft_from_post
        assert parts.store is checks.store_check
        assert parts.result_serializer is QualityCheckResultSerializer


def test_every_phase_has_a_payload_and_a_draft_reader():
    assert {phase: submit_serializer(phase) for phase in Phase} == {
        **SUBMIT_SERIALIZERS,
        Phase.QUALITY_CHECK: QualityCheckSubmitSerializer,
        Phase.POST_CONTROL: PostControlSubmitSerializer,
    }
    assert set(draft_parsers()) == set(Phase)


def test_a_phase_nobody_registered_names_the_app_that_is_missing(monkeypatch):
    monkeypatch.setattr(phases, "_registered", {})
    with pytest.raises(ImproperlyConfigured, match="review for P3 and P5"):
        phases.parts_of(Phase.POST_CONTROL)
