"""The search API, included at /api/v1/search/ (namespace "search")."""

from django.urls import path

from annotation import search_api

app_name = "search"

urlpatterns = [
    path("", search_api.search, name="search"),
    path("open/", search_api.open_page, name="open"),
]
