from django.urls import path

from orchestrator.console import schedule_views, views

app_name = "console"

urlpatterns = [
    path("console/login", views.login_page, name="login"),
    path("console/logout", views.logout_page, name="logout"),
    path("console/preferences", views.preferences_page, name="preferences"),
    path("console/", views.run_list_page, name="runs"),
    path("console/runs/bulk", views.run_bulk_page, name="runs-bulk"),
    path("console/grid", views.grid_page, name="grid"),
    path("console/runs/<str:run_id>", views.run_page, name="run"),
    path("console/runs/<str:run_id>/live", views.run_live_page, name="run-live"),
    path("console/runs/<str:run_id>/cancel", views.run_cancel_page, name="run-cancel"),
    path("console/runs/<str:run_id>/pause", views.run_pause_page, name="run-pause"),
    path("console/runs/<str:run_id>/resume", views.run_resume_page, name="run-resume"),
    path("console/runs/<str:run_id>/rerun", views.run_rerun_page, name="run-rerun"),
    path("console/task-runs/<str:task_run_id>", views.task_run_page, name="task-run"),
    path("console/task-runs/<str:task_run_id>/log.txt", views.task_run_log_page, name="task-run-log"),
    path("console/dags", views.dag_list_page, name="dags"),
    path("console/dags/<str:dag_id>", views.dag_page, name="dag"),
    path("console/dags/<str:dag_id>/schedule", views.dag_schedule_page, name="dag-schedule"),
    path("console/tasks", views.task_list_page, name="tasks"),
    path("console/tasks/<str:task_id>", views.task_page, name="task"),
    path("console/tasks/<str:task_id>/schedule", views.task_schedule_page, name="task-schedule"),
    path("console/schedules", schedule_views.schedule_list_page, name="schedules"),
    path("console/schedules/new", schedule_views.schedule_create_page, name="schedule-create"),
    path("console/schedules/preview", schedule_views.schedule_preview_page, name="schedule-preview"),
    path("console/schedules/<str:schedule_id>", schedule_views.schedule_page, name="schedule"),
    path("console/schedules/<str:schedule_id>/edit", schedule_views.schedule_edit_page, name="schedule-edit"),
    path(
        "console/schedules/<str:schedule_id>/pause", schedule_views.schedule_pause_page, name="schedule-pause"
    ),
    path(
        "console/schedules/<str:schedule_id>/delete",
        schedule_views.schedule_delete_page,
        name="schedule-delete",
    ),
    path("console/agents", views.agent_list_page, name="agents"),
    path("console/agents/<str:agent_id>/retire", views.agent_retire_page, name="agent-retire"),
    path("console/queues", views.queue_list_page, name="queues"),
    path("console/queues/<str:queue_name>/purge", views.queue_purge_page, name="queue-purge"),
]
