from django.urls import path

from review import dashboard, views

app_name = "review"

urlpatterns = [
    path("tasks/<int:pk>/check/", views.submit_check, name="submit-check"),
    path("claims/<int:pk>/", views.claim_history, name="claim-history"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/evidence/", dashboard.dashboard_evidence, name="dashboard-evidence"),
    path("dashboard/<slug:table>.csv", dashboard.dashboard_csv, name="dashboard-csv"),
    path("dashboard/stuck/fix/", dashboard.fix_stuck, name="fix-stuck"),
]
