from django.urls import path

from orchestrator.runs import apis

urlpatterns = [
    path("schedule-task", apis.ScheduleTaskApi.as_view(), name="schedule-task"),
    path("schedule-dag", apis.ScheduleDagApi.as_view(), name="schedule-dag"),
    path("cancel-run/<str:run_id>", apis.RunCancelApi.as_view(), name="cancel-run"),
    path("rerun/<str:run_id>", apis.RunRerunApi.as_view(), name="rerun"),
    path("runs", apis.RunListApi.as_view(), name="run-list"),
    path("runs/<str:run_id>", apis.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<str:run_id>/pause", apis.RunPauseApi.as_view(), name="run-pause"),
    path("runs/<str:run_id>/resume", apis.RunResumeApi.as_view(), name="run-resume"),
    path("runs/<str:run_id>/graph", apis.RunGraphApi.as_view(), name="run-graph"),
    path("tasks/<str:task_run_id>/logs", apis.TaskLogsApi.as_view(), name="task-logs"),
    path("tasks/<str:task_run_id>/logs/stream", apis.TaskLogStreamApi.as_view(), name="task-logs-stream"),
    path("pools", apis.PoolListApi.as_view(), name="pool-list"),
    path("pools/<str:name>", apis.PoolDetailApi.as_view(), name="pool-detail"),
    path("queues/<str:queue_name>/purge", apis.QueuePurgeApi.as_view(), name="queue-purge"),
]
