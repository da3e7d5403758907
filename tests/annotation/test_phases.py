"""annotation/phases.py: every phase is one row, registered by the app that owns it."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from annotation import phases, workflow
from annotation.forms import evidence as evidence_forms
from annotation.forms import phase1 as phase1_forms
from annotation.serializers import (
    EvidenceSubmitSerializer,
    NormalisationSubmitSerializer,
    QualityCheckTaskSerializer,
)
from annotation.views import evidence, phase1
from annotation.vocabulary import BLIND_PHASES, Phase
from review import checks, forms, views
from review.serializers import (
    PostControlSubmitSerializer,
    QualityCheckResultSerializer,
    QualityCheckSubmitSerializer,
)


def test_every_phase_is_registered_when_django_starts():
    assert list(phases.registered()) == list(Phase)


def test_review_registers_the_blind_checks_when_django_starts():
    for phase in BLIND_PHASES:
        parts = phases.parts_of(phase)
        assert parts.screen is views.check_page
        assert parts.draft_from_post is forms.draft_from_post
        assert parts.draft_summary is forms.draft_summary
        assert parts.store is checks.store_check
        assert parts.task_serializer is QualityCheckTaskSerializer
        assert parts.result_serializer is QualityCheckResultSerializer
    assert phases.parts_of(Phase.QUALITY_CHECK).submit is workflow.submit_quality_check
    assert phases.parts_of(Phase.POST_CONTROL).submit is workflow.submit_post_control
    assert phases.review_reads().latest_check is checks.latest_check


def test_annotation_registers_normalisation_and_the_evidence_phases():
    p1 = phases.parts_of(Phase.NORMALISATION)
    assert p1.screen is phase1.normalisation_page
    assert p1.draft_from_post is phase1_forms.draft_from_post
    assert p1.submit is workflow.submit_normalisation
    assert p1.store is None
    for phase in (Phase.QUESTIONS, Phase.DISPUTE):
        parts = phases.parts_of(phase)
        assert parts.screen is evidence.evidence_page
        assert parts.draft_summary is evidence_forms.draft_summary
        assert parts.store is None
    assert phases.parts_of(Phase.DISPUTE).evidence_shown is workflow.evidence_in_dispute
    assert phases.parts_of(Phase.QUESTIONS).evidence_shown is phases.no_evidence


def test_every_phase_has_a_payload_and_a_draft_reader():
    assert {phase: parts.submit_serializer for phase, parts in phases.registered().items()} == {
        Phase.NORMALISATION: NormalisationSubmitSerializer,
        Phase.QUESTIONS: EvidenceSubmitSerializer,
        Phase.QUALITY_CHECK: QualityCheckSubmitSerializer,
        Phase.DISPUTE: EvidenceSubmitSerializer,
        Phase.POST_CONTROL: PostControlSubmitSerializer,
    }
    assert all(callable(parts.draft_from_post) for parts in phases.registered().values())


def test_a_phase_nobody_registered_names_the_app_that_is_missing(monkeypatch):
    monkeypatch.setattr(phases, "_registered", {})
    with pytest.raises(ImproperlyConfigured, match="review for P3 and P5"):
        phases.parts_of(Phase.POST_CONTROL)


def test_without_review_annotation_says_it_cannot_read_the_checks(monkeypatch):
    monkeypatch.setattr(phases, "_review_reads", [])
    with pytest.raises(ImproperlyConfigured, match="review registers"):
        phases.review_reads()
