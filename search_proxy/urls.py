"""The search API, included at /api/v1/search/ (namespace "search")."""

from django.urls import path

from search_proxy import api

app_name = "search"

urlpatterns = [
    path("", api.search, name="search"),
    path("open/", api.open_page, name="open"),
]
