from django.urls import path

from review import views

app_name = "review"

urlpatterns = [
    path("tasks/<int:pk>/check/", views.submit_check, name="submit-check"),
    path("claims/<int:pk>/", views.claim_history, name="claim-history"),
]
