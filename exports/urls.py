"""Researchers' pages under /exports/ (namespace "exports")."""

from django.urls import path

from exports import views

app_name = "exports"

urlpatterns = [
    path("", views.export_list, name="export-list"),
    path("new/", views.export_create, name="export-create"),
    path("<int:pk>/", views.export_job, name="export-job"),
    path("<int:pk>/download/", views.export_download, name="export-download"),
    path("statistics/", views.statistics, name="statistics"),
    path("scoring/", views.scoring_form, name="scoring"),
    path("scoring/<int:pk>/", views.scoring_job, name="scoring-job"),
]
