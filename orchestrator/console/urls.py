from django.urls import path
from django.views.i18n import set_language

from orchestrator.console import views

app_name = "console"

urlpatterns = [
    path("console/login", views.login_page, name="login"),
    path("console/logout", views.logout_page, name="logout"),
    path("console/", views.run_list_page, name="runs"),
    path("console/runs/<str:run_id>", views.run_page, name="run"),
    path("console/runs/<str:run_id>/live", views.run_live_page, name="run-live"),
    path("console/runs/<str:run_id>/cancel", views.run_cancel_page, name="run-cancel"),
    path("console/runs/<str:run_id>/pause", views.run_pause_page, name="run-pause"),
    path("console/runs/<str:run_id>/resume", views.run_resume_page, name="run-resume"),
    path("console/runs/<str:run_id>/rerun", views.run_rerun_page, name="run-rerun"),
    path("console/task-runs/<str:task_run_id>", views.task_run_page, name="task-run"),
    path("console/dags", views.dag_list_page, name="dags"),
    path("console/dags/<str:dag_id>", views.dag_page, name="dag"),
    path("console/dags/<str:dag_id>/schedule", views.dag_schedule_page, name="dag-schedule"),
    path("console/tasks", views.task_list_page, name="tasks"),
    path("console/tasks/<str:task_id>", views.task_page, name="task"),
    path("console/tasks/<str:task_id>/schedule", views.task_schedule_page, name="task-schedule"),
    path("console/agents", views.agent_list_page, name="agents"),
    path("console/queues", views.queue_list_page, name="queues"),
    path("console/queues/<str:queue_name>/purge", views.queue_purge_page, name="queue-purge"),
    path("console/language", set_language, name="language"),
]
