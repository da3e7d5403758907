from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review (P3-P5) and agreement"

    def ready(self) -> None:
        # annotation dispatches tasks by phase but cannot import review (it sits below it),
        # so review hands it the blind checks' parts here, once the apps are loaded.
        from django.db.models.signals import post_save

        from annotation import phases, workflow
        from annotation.models import EvidenceRound
        from annotation.serializers import QualityCheckTaskSerializer
        from annotation.vocabulary import Phase
        from review import checks, forms, serializers, stored, views
        from review.models import QualityCheck

        # Stored agreement ratings follow every verdict, whichever path stored it.
        for model in (EvidenceRound, QualityCheck):
            post_save.connect(
                stored.on_verdict_saved, sender=model, dispatch_uid=f"ratings-{model}"
            )
        # A claim's second P2 QA set queues its METEOR score (once the hand-in commits).
        post_save.connect(
            stored.on_evidence_round_saved, sender=EvidenceRound, dispatch_uid="evidence-score"
        )

        for phase, submit, submit_serializer, evidence_shown in (
            (
                Phase.QUALITY_CHECK,
                workflow.submit_quality_check,
                serializers.QualityCheckSubmitSerializer,
                checks.evidence_for_quality_check,
            ),
            (
                Phase.POST_CONTROL,
                workflow.submit_post_control,
                serializers.PostControlSubmitSerializer,
                checks.evidence_for_post_control,
            ),
        ):
            phases.register(
                phase,
                phases.PhaseParts(
                    screen=views.check_page,
                    draft_from_post=forms.draft_from_post,
                    draft_summary=forms.draft_summary,
                    submit=submit,
                    task_serializer=QualityCheckTaskSerializer,
                    submit_serializer=submit_serializer,
                    result_serializer=serializers.QualityCheckResultSerializer,
                    evidence_shown=evidence_shown,
                    handed_in=checks.own_check,
                    produced=checks.check_of,
                    draft_travels=False,
                    store=checks.store_check,
                ),
            )
        # What annotation reads of the checks, so it never touches review's models.
        phases.register_review_reads(
            phases.ReviewReads(
                latest_check=checks.latest_check,
                checked_rounds=checks.checked_rounds,
                agreeing_rounds=checks.agreeing_rounds,
            )
        )
