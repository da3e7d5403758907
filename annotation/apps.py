from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from annotation.middleware import remember_sign_in

        user_logged_in.connect(remember_sign_in, dispatch_uid="annotation.remember_sign_in")
        register_phases()


def register_phases() -> None:
    """P1, P2 and P4 as rows of annotation/phases.py (review registers P3 and P5)."""
    from annotation import api, phases, serializers, workflow
    from annotation.forms import evidence as evidence_forms
    from annotation.forms import phase1 as phase1_forms
    from annotation.views import evidence, phase1
    from annotation.vocabulary import Phase

    phases.register(
        Phase.NORMALISATION,
        phases.PhaseParts(
            screen=phase1.normalisation_page,
            draft_from_post=phase1_forms.draft_from_post,
            draft_summary=phase1_forms.draft_summary,
            submit=workflow.submit_normalisation,
            task_serializer=serializers.NormalisationTaskSerializer,
            submit_serializer=serializers.NormalisationSubmitSerializer,
            result_serializer=serializers.NormalisationResultSerializer,
            api_submit=api.submit_normalisation,
            draft_warnings=phase1.draft_warnings,
            save_status_part="annotation/_save_status.html#claim-warnings",
            handed_in=phase1.handed_in,
        ),
    )
    # P2 and P4 share the evidence editor; P4 revises the pairs in dispute.
    for phase, submit, task_serializer, evidence_shown in (
        (
            Phase.QUESTIONS,
            workflow.submit_evidence,
            serializers.EvidenceTaskSerializer,
            phases.no_evidence,
        ),
        (
            Phase.DISPUTE,
            workflow.submit_dispute_resolution,
            serializers.DisputeTaskSerializer,
            workflow.evidence_in_dispute,
        ),
    ):
        phases.register(
            phase,
            phases.PhaseParts(
                screen=evidence.evidence_page,
                draft_from_post=evidence_forms.draft_from_post,
                draft_summary=evidence_forms.draft_summary,
                submit=submit,
                task_serializer=task_serializer,
                submit_serializer=serializers.EvidenceSubmitSerializer,
                result_serializer=serializers.EvidenceRoundResultSerializer,
                evidence_shown=evidence_shown,
                draft_warnings=evidence.draft_warnings,
                save_status_part="annotation/_save_status.html#evidence-hints",
                handed_in=evidence.handed_in,
                produced=workflow.evidence_round_of,
            ),
        )
