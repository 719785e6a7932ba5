from django.urls import path

from casemgmt.prompts import apis

urlpatterns = [
    path("prompt-templates", apis.PromptTemplateListCreateApi.as_view(), name="prompt-template-list"),
    path(
        "prompt-templates/<str:name>", apis.PromptTemplateDetailApi.as_view(), name="prompt-template-detail"
    ),
    path(
        "prompt-templates/<str:name>/versions/<int:version>",
        apis.PromptTemplateVersionApi.as_view(),
        name="prompt-template-version",
    ),
]
