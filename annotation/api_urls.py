"""The API under /api/v1/ (namespace "api"); the schema and its docs live in config/urls.py."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from annotation import api

app_name = "api"

router = SimpleRouter()
router.register("tasks", api.TaskViewSet, basename="task")

urlpatterns = [
    path("auth/token/", api.TokenView.as_view(), name="token"),
    path("auth/logout/", api.SignOutView.as_view(), name="logout"),
    path("auth/logout-all/", api.SignOutEverywhereView.as_view(), name="logout-all"),
    *router.urls,
]
