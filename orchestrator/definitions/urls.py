from django.urls import path

from orchestrator.definitions import apis

urlpatterns = [
    path("tasks", apis.TaskListApi.as_view(), name="task-list"),
    path("tasks/<str:task_id>", apis.TaskDetailApi.as_view(), name="task-detail"),
    path("dags", apis.DagListApi.as_view(), name="dag-list"),
    path("dags/<str:dag_id>", apis.DagDetailApi.as_view(), name="dag-detail"),
    path("contexts", apis.ContextListApi.as_view(), name="context-list"),
    path("contexts/<str:context_id>", apis.ContextDetailApi.as_view(), name="context-detail"),
    path("parameter-sets", apis.ParameterSetListApi.as_view(), name="parameter-set-list"),
    path(
        "parameter-sets/<str:parameter_set_id>",
        apis.ParameterSetDetailApi.as_view(),
        name="parameter-set-detail",
    ),
]
