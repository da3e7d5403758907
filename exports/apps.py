from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = "Dataset import, export and scoring"

    def ready(self) -> None:
        from annotation.signals import claim_accepted
        from exports.webhooks import on_claim_accepted

        claim_accepted.connect(on_claim_accepted, dispatch_uid="exports.claim_accepted")
