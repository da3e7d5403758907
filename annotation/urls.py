from django.urls import path

from annotation.views import editing, evidence, manage, panel, phase1

app_name = "annotation"

urlpatterns = [
    path("", panel.control_panel, name="control-panel"),
    path("phase/<int:phase>/next/", panel.start_next, name="start-next"),
    path("tasks/<int:pk>/", panel.task_detail, name="task"),
    path("tasks/<int:pk>/draft/", editing.save_draft, name="save-draft"),
    path("tasks/<int:pk>/article-loaded/", editing.article_loaded, name="article-loaded"),
    path("tasks/<int:pk>/normalise/", phase1.submit, name="submit-normalisation"),
    path("tasks/<int:pk>/skip/", phase1.skip, name="skip-article"),
    path("dates/earliest/", phase1.earliest_date_hint, name="earliest-date"),
    path("tasks/<int:pk>/evidence/", evidence.review, name="review-evidence"),
    path("tasks/<int:pk>/evidence/confirm/", evidence.confirm, name="confirm-evidence"),
    path("tasks/<int:pk>/report/", evidence.report, name="report-claim"),
    path("tasks/<int:pk>/search/", evidence.search_panel, name="search-panel"),
    path("tasks/<int:pk>/open/", evidence.open_result, name="open-result"),
    path("tours/<slug:name>/done/", editing.tour_done, name="tour-done"),
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
    path("manage/sampling/", manage.set_sampling, name="set-sampling"),
]
