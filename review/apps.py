from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review (P3-P5) and agreement"

    def ready(self) -> None:
        # annotation dispatches tasks by phase but cannot import review (it sits below it),
        # so review hands it the blind checks' parts here, once the apps are loaded.
        from annotation import phases
        from annotation.vocabulary import Phase
        from review import checks, forms, serializers, views

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
