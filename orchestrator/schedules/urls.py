from django.urls import path

from orchestrator.schedules import apis

urlpatterns = [
    path("schedules", apis.ScheduleListCreateApi.as_view(), name="schedules"),
    path("schedules/<str:schedule_id>", apis.ScheduleDetailApi.as_view(), name="schedule-detail"),
    path("schedules/<str:schedule_id>/pause", apis.SchedulePauseApi.as_view(), name="schedule-pause"),
    path("schedules/<str:schedule_id>/resume", apis.ScheduleResumeApi.as_view(), name="schedule-resume"),
]
