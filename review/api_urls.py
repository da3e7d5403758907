"""The managers' reporting API under /api/v1/ (namespace "review_api")."""

from django.urls import path

from review import api

app_name = "review_api"

urlpatterns = [
    path("agreement/", api.AgreementView.as_view(), name="agreement"),
    path("progress/", api.ProgressView.as_view(), name="progress"),
]
