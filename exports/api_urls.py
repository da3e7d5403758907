"""The researchers' API under /api/v1/ (namespace "exports_api"): claims, export jobs, webhooks."""

from rest_framework.routers import SimpleRouter

from exports import api

app_name = "exports_api"

router = SimpleRouter()
router.register("claims", api.ClaimViewSet, basename="claim")
router.register("export-jobs", api.ExportJobViewSet, basename="export-job")
router.register("webhooks", api.WebhookViewSet, basename="webhook")

urlpatterns = router.urls
