from django.urls import path

from annotation.views import manage, panel

app_name = "annotation"

urlpatterns = [
    path("", panel.control_panel, name="control-panel"),
    path("phase/<int:phase>/next/", panel.start_next, name="start-next"),
    path("tasks/<int:pk>/", panel.task_detail, name="task"),
    path("manage/", manage.manager_panel, name="manager-panel"),
    path("manage/people/", manage.people, name="people"),
    path("manage/people/passwords.csv", manage.download_new_passwords, name="new-passwords"),
    path("manage/people/<int:pk>/", manage.person, name="person"),
    path("manage/assign/", manage.assign, name="assign"),
    path("manage/tasks/", manage.tasks, name="tasks"),
    path("manage/tasks/<int:pk>/release/", manage.release, name="release"),
    path("manage/tasks/<int:pk>/reassign/", manage.reassign, name="reassign"),
    path("manage/claims/<int:pk>/reopen/", manage.reopen, name="reopen"),
    path("manage/audit/", manage.audit_log, name="audit"),
]
