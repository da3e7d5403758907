from django.urls import path

from annotation.views import editing, evidence, manage, panel, phase1, suggestions, training

app_name = "annotation"

urlpatterns = [
    path("", panel.control_panel, name="control-panel"),
    path("phase/<int:phase>/next/", panel.start_next, name="start-next"),
    path("tasks/<int:pk>/", panel.task_detail, name="task"),
    path("tasks/<int:pk>/draft/", editing.save_draft, name="save-draft"),
    path("tasks/<int:pk>/article-loaded/", editing.article_loaded, name="article-loaded"),
    path("tasks/<int:pk>/normalise/", phase1.submit, name="submit-normalisation"),
    path("tasks/<int:pk>/skip/", phase1.skip, name="skip-article"),
    path("tasks/<int:pk>/article-text/", phase1.article_text, name="article-text"),
    path("dates/earliest/", phase1.earliest_date_hint, name="earliest-date"),
    path("claims/wording-hints/", phase1.wording_hints, name="wording-hints"),
    path("tasks/<int:pk>/evidence/", evidence.check_pairs, name="check-evidence"),
    path("tasks/<int:pk>/source-check/", evidence.source_check, name="source-check"),
    path("tasks/<int:pk>/evidence/confirm/", evidence.confirm, name="confirm-evidence"),
    path("tasks/<int:pk>/report/", evidence.report, name="report-claim"),
    path("tasks/<int:pk>/search/", evidence.search_panel, name="search-panel"),
    path("tasks/<int:pk>/open/", evidence.open_result, name="open-result"),
    path("tasks/<int:pk>/suggestions/", suggestions.suggest, name="suggestions"),
    path(
        "tasks/<int:pk>/suggestions/sentences/",
        suggestions.suggest_sentences,
        name="suggested-sentences",
    ),
    path(
        "tasks/<int:pk>/suggestions/<int:suggestion_pk>/outcome/",
        suggestions.record_outcome,
        name="suggestion-outcome",
    ),
    path("tours/<slug:name>/done/", editing.tour_done, name="tour-done"),
    path("training/<int:phase>/", training.train, name="training"),
    path("training/<int:phase>/claims/<int:claim_pk>/", training.hand_in, name="training-hand-in"),
    path("training/answers/<int:pk>/", training.feedback, name="training-feedback"),
    path("manage/qualification/", training.qualification, name="qualification"),
    path("manage/", manage.manager_panel, name="manager-panel"),
    path("manage/people/", manage.people, name="people"),
    path("manage/people/<int:pk>/", manage.person, name="person"),
    path("manage/assign/", manage.assign, name="assign"),
    path("manage/tasks/", manage.tasks, name="tasks"),
    path("manage/tasks/<int:pk>/release/", manage.release, name="release"),
    path("manage/tasks/<int:pk>/reassign/", manage.reassign, name="reassign"),
    path("manage/claims/<int:pk>/reopen/", manage.reopen, name="reopen"),
    path("manage/audit/", manage.audit_log, name="audit"),
    path("manage/archives/", manage.archives, name="archives"),
    path("manage/archives/retry/", manage.retry_archives, name="retry-archives"),
    path("manage/sampling/", manage.set_sampling, name="set-sampling"),
    path("manage/suggestions/", suggestions.manage, name="manage-suggestions"),
    path(
        "manage/suggestions/batches/<int:pk>/",
        suggestions.set_batch_suggestions,
        name="batch-suggestions",
    ),
    path("manage/suggestions/build/", suggestions.build_pool, name="build-suggestions"),
    path(
        "manage/suggestions/build/<int:pk>/",
        suggestions.build_progress,
        name="suggestion-build",
    ),
]
