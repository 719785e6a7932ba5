from django.urls import path

from casemgmt.workflows.apis import control, inbox, teams, workflows

TASK = "tasks/<uuid:case_id>/<str:step_id>"

urlpatterns = [
    path("workflows", workflows.WorkflowListCreateApi.as_view(), name="workflow-list"),
    path("workflows/<uuid:workflow_id>", workflows.WorkflowDetailApi.as_view(), name="workflow-detail"),
    path(
        "workflows/<uuid:workflow_id>/publish",
        workflows.WorkflowPublishApi.as_view(),
        name="workflow-publish",
    ),
    path(
        "workflows/<uuid:workflow_id>/withdraw",
        workflows.WorkflowWithdrawApi.as_view(),
        name="workflow-withdraw",
    ),
    path(
        "workflows/<uuid:workflow_id>/migrate",
        control.WorkflowMigrateApi.as_view(),
        name="workflow-migrate",
    ),
    path("cases/<uuid:case_id>/messages/<str:name>", control.CaseMessageApi.as_view(), name="case-message"),
    path("tasks/inbox", inbox.TaskInboxApi.as_view(), name="task-inbox"),
    path("tasks/bulk", inbox.TaskBulkApi.as_view(), name="task-bulk"),
    path(TASK, inbox.TaskDetailApi.as_view(), name="task-detail"),
    path(f"{TASK}/claim", inbox.TaskClaimApi.as_view(), name="task-claim"),
    path(f"{TASK}/release", inbox.TaskReleaseApi.as_view(), name="task-release"),
    path(f"{TASK}/complete", inbox.TaskCompleteApi.as_view(), name="task-complete"),
    path(f"{TASK}/draft", inbox.TaskDraftApi.as_view(), name="task-draft"),
    path(f"{TASK}/reassign", inbox.TaskReassignApi.as_view(), name="task-reassign"),
    path(f"{TASK}/escalate", inbox.TaskEscalateApi.as_view(), name="task-escalate"),
    path("teams", teams.TeamListCreateApi.as_view(), name="team-list"),
    path("teams/<uuid:team_id>", teams.TeamDetailApi.as_view(), name="team-detail"),
    path("teams/<uuid:team_id>/members", teams.TeamMemberAddApi.as_view(), name="team-members"),
    path(
        "teams/<uuid:team_id>/members/<uuid:user_id>",
        teams.TeamMemberRemoveApi.as_view(),
        name="team-member",
    ),
]
