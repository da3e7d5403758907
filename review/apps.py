from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review (P3-P5) and agreement"

    def ready(self) -> None:
        # annotation dispatches tasks by phase but cannot import review (it sits below it),
        # so review hands it the blind checks' parts here, once the apps are loaded.
        from django.db.models.signals import post_save

        from annotation import phases
        from annotation.models import EvidenceRound
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

        for phase, submit_serializer in (
            (Phase.QUALITY_CHECK, serializers.QualityCheckSubmitSerializer),
            (Phase.POST_CONTROL, serializers.PostControlSubmitSerializer),
        ):
            phases.register(
                phase,
                phases.PhaseParts(
                    screen=views.check_page,
                    draft_from_post=forms.draft_from_post,
                    store=checks.store_check,
                    submit_serializer=submit_serializer,
                    result_serializer=serializers.QualityCheckResultSerializer,
                ),
            )
