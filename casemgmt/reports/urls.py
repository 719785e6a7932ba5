from django.urls import path

from casemgmt.reports import apis

urlpatterns = [
    path("reports", apis.ReportListCreateApi.as_view(), name="reports"),
    path("reports/dashboard", apis.ReportDashboardApi.as_view(), name="report-dashboard"),
    path("reports/summary", apis.ReportSummaryApi.as_view(), name="report-summary"),
    path("reports/sla-compliance", apis.ReportSlaComplianceApi.as_view(), name="report-sla-compliance"),
    path("reports/ask", apis.ReportAskApi.as_view(), name="report-ask"),
    path("reports/<uuid:report_id>", apis.ReportDetailApi.as_view(), name="report-detail"),
    path("reports/<uuid:report_id>/run", apis.ReportRunApi.as_view(), name="report-run"),
]
