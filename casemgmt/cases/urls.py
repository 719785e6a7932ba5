from django.urls import path

from casemgmt.cases import apis, audit_apis

urlpatterns = [
    path("case-types", apis.CaseTypeListCreateApi.as_view(), name="case-types"),
    path("case-types/<uuid:case_type_id>", apis.CaseTypeDetailApi.as_view(), name="case-type-detail"),
    path("cases", apis.CaseListCreateApi.as_view(), name="cases"),
    path("cases/bulk", apis.CaseBulkApi.as_view(), name="case-bulk"),
    path("cases/search", apis.CaseSearchApi.as_view(), name="case-search"),
    path("cases/dashboard", apis.CaseDashboardApi.as_view(), name="case-dashboard"),
    path("cases/<uuid:case_id>", apis.CaseDetailApi.as_view(), name="case-detail"),
    path("cases/<uuid:case_id>/data", apis.CaseDataUpdateApi.as_view(), name="case-data"),
    path("cases/<uuid:case_id>/close", apis.CaseCloseApi.as_view(), name="case-close"),
    path("cases/<uuid:case_id>/cancel", apis.CaseCancelApi.as_view(), name="case-cancel"),
    path("cases/<uuid:case_id>/comments", apis.CaseCommentListCreateApi.as_view(), name="case-comments"),
    path("cases/<uuid:case_id>/events", audit_apis.CaseEventListApi.as_view(), name="case-events"),
    path(
        "cases/<uuid:case_id>/events/verify",
        audit_apis.CaseEventVerifyApi.as_view(),
        name="case-events-verify",
    ),
    path(
        "cases/<uuid:case_id>/events/export",
        audit_apis.CaseEventExportApi.as_view(),
        name="case-events-export",
    ),
]
