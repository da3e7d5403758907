from django.urls import path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("", views.control_panel, name="control-panel"),
    path("manage/", views.manager_panel, name="manager-panel"),
]
