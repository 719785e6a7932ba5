from django.urls import path

from casemgmt.console import case_views, onboarding_views, team_views, user_views, views

app_name = "console"

urlpatterns = [
    path("console/login", views.login_page, name="login"),
    path("console/logout", views.logout_page, name="logout"),
    path("console/password/set", onboarding_views.password_set_page, name="password-set"),
    path("console/", views.inbox_page, name="inbox"),
    path("console/tasks/<uuid:case_id>/<str:step_id>", views.task_page, name="task"),
    path("console/tasks/<uuid:case_id>/<str:step_id>/claim", views.task_claim_page, name="task-claim"),
    path("console/tasks/<uuid:case_id>/<str:step_id>/draft", views.task_draft_page, name="task-draft"),
    path(
        "console/tasks/<uuid:case_id>/<str:step_id>/reassign", views.task_reassign_page, name="task-reassign"
    ),
    path(
        "console/tasks/<uuid:case_id>/<str:step_id>/escalate", views.task_escalate_page, name="task-escalate"
    ),
    path("console/tasks/<uuid:case_id>/<str:step_id>/release", views.task_release_page, name="task-release"),
    path("console/live/ticket", views.live_ticket_page, name="live-ticket"),
    path("console/dashboard", user_views.dashboard_page, name="dashboard"),
    path("console/preferences", user_views.preferences_page, name="preferences"),
    path("console/cases", views.case_list_page, name="cases"),
    path("console/cases/new", case_views.case_new_page, name="case-new"),
    path("console/cases/<uuid:case_id>", views.case_page, name="case"),
    path("console/cases/<uuid:case_id>/close", case_views.case_close_page, name="case-close"),
    path("console/cases/<uuid:case_id>/cancel", case_views.case_cancel_page, name="case-cancel"),
    path(
        "console/cases/<uuid:case_id>/messages/<str:name>", case_views.case_message_page, name="case-message"
    ),
    path("console/tasks/bulk", team_views.tasks_bulk_page, name="tasks-bulk"),
    path("console/cases/bulk", team_views.cases_bulk_page, name="cases-bulk"),
    path("console/cases/<uuid:case_id>/comments", team_views.case_comment_page, name="case-comment"),
    path("console/out-of-office", team_views.out_of_office_page, name="out-of-office"),
    path("console/cases/<uuid:case_id>/audit/verify", views.case_verify_page, name="case-verify"),
    path("console/cases/<uuid:case_id>/documents", views.document_upload_page, name="document-upload"),
    path(
        "console/documents/<uuid:document_id>/download",
        views.document_download_page,
        name="document-download",
    ),
]
