"""Task definitions, DAGs, contexts and parameter sets. Each PUT body is read (and documented) by
the view's `InputSerializer`, which lists every problem in one 400; responses are built by the
`*_out` functions below."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.definitions import openapi, selectors, services
from orchestrator.definitions.inputs import (
    AllowedEnvField,
    BoundedIntegerField,
    DagTaskListSerializer,
    EnvironmentMapField,
    ObjectBodySerializer,
    TextField,
    TextListField,
)
from orchestrator.definitions.models import Context, Dag, ParameterSet, TaskDefinition
from orchestrator.security.principals import actor_name
from shared.api.openapi import TEXT, query
from shared.api.pagination import list_body
from shared.api.querying import (
    QuerySerializer,
    QuerySortField,
    QueryTextField,
    list_parameters,
    page_of,
    paged,
)
from shared.api.time import iso

VERSION_PARAM = OpenApiParameter(
    "version", {"type": "integer", "minimum": 1}, description="An earlier version of the definition."
)


def task_out(task: TaskDefinition, *, detail: bool = False) -> dict:
    out = {
        "id": task.id,
        "name": task.name,
        "description": task.description,
        "command": task.command,
        "dependencies": task.dependencies,
        "parameters": task.parameters,
        "allowed_env": task.allowed_env,
        "queue": task.queue,
        "pool": task.pool,
        "version": task.version,
    }
    if detail:
        out.update(created_at=iso(task.created_at), updated_at=iso(task.updated_at))
    return out


def dag_out(dag: Dag, *, detail: bool = False) -> dict:
    out = {
        "id": dag.id,
        "name": dag.name,
        "description": dag.description,
        "tasks": dag.tasks if detail else [entry["id"] for entry in dag.tasks],
        "context": dag.context,
        "tags": dag.tags,
        "max_active_runs": dag.max_active_runs,
        "version": dag.version,
    }
    if detail:
        out.update(created_at=iso(dag.created_at), updated_at=iso(dag.updated_at))
    return out


def context_out(context: Context, *, detail: bool = False) -> dict:
    out = {"id": context.id, "variables": context.variables, "extends": context.extends}
    if detail:
        out.update(created_at=iso(context.created_at), updated_at=iso(context.updated_at))
    return out


def parameter_set_out(pset: ParameterSet, *, detail: bool = False) -> dict:
    out = {"id": pset.id, "parameters": pset.parameters}
    if detail:
        out.update(created_at=iso(pset.created_at), updated_at=iso(pset.updated_at))
    return out


def deleted_out(message: str) -> dict:
    return {"success": True, "message": message}


class VersionFilterSerializer(QuerySerializer):
    """A definition view's `FilterSerializer`: `?version=N` reads that version of the definition."""

    version = QueryTextField()

    def validate_version(self, value: str | None) -> int | None:
        if value is not None and (not value.isdigit() or int(value) < 1):
            raise serializers.ValidationError("version must be a positive integer")
        return None if value is None else int(value)


def _version_param(filter_serializer: type[VersionFilterSerializer], request: Request) -> int | None:
    filters = filter_serializer(data=request.query_params)
    filters.is_valid(raise_exception=True)
    return filters.validated_data["version"]


class TaskListApi(APIView):
    class FilterSerializer(QuerySerializer):
        filter = QueryTextField(source="pattern")
        queue = QueryTextField()
        sort = QuerySortField(allowed=selectors.TASK_SORTS)

    @extend_schema(
        operation_id="tasks_list",
        responses=openapi.TaskList,
        parameters=[
            *list_parameters(sorts=selectors.TASK_SORTS),
            query("filter", TEXT, "ids or names: a glob with * or ?, else a substring"),
            query("queue", TEXT),
        ],
    )
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        items, total = paged(selectors.task_list(**filters.validated_data), page)
        return Response(list_body("tasks", [task_out(t) for t in items], total, page))


class TaskDetailApi(APIView):
    FilterSerializer = VersionFilterSerializer

    @extend_schema_serializer(component_name="TaskIn")
    class InputSerializer(ObjectBodySerializer):
        name = TextField(required=False, allow_null=True, allow_blank=True)
        description = TextField(required=False, allow_null=True, allow_blank=True)
        command = TextField(help_text="May contain ${NAME} references (substituted shell-quoted).")
        dependencies = TextListField(child=openapi.IdField(), required=False, allow_null=True)
        parameters = EnvironmentMapField(required=False)
        allowed_env = AllowedEnvField(
            child=serializers.CharField(),
            required=False,
            allow_null=True,
            help_text=(
                "Environment names that schedule-task/schedule-dag env_vars and parameters may set for "
                "this task (others: 400). Null or absent: not declared, any name but the refused ones."
            ),
        )
        queue = TextField(
            required=False, allow_null=True, allow_blank=True, help_text="Empty: the default queue."
        )
        pool = TextField(
            unset=None,
            required=False,
            allow_null=True,
            allow_blank=True,
            help_text="A pool's name (unknown: 400).",
        )

    @extend_schema(parameters=[VERSION_PARAM], responses=openapi.TaskOut)
    def get(self, request: Request, task_id: str) -> Response:
        version = _version_param(self.FilterSerializer, request)
        if version is not None:
            return Response(task_out(selectors.task_version(task_id=task_id, version=version), detail=True))
        return Response(task_out(selectors.get_or_404(TaskDefinition, task_id, "Task"), detail=True))

    @extend_schema(responses={200: openapi.TaskOut, 201: openapi.TaskOut})
    def put(self, request: Request, task_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        task, created = services.task_definition_put(
            actor=actor_name(request.user), task_id=task_id, **serializer.validated_data
        )
        return Response(task_out(task, detail=True), status=201 if created else 200)

    @extend_schema(responses={200: openapi.Deleted})
    def delete(self, request: Request, task_id: str) -> Response:
        services.task_definition_delete(actor=actor_name(request.user), task_id=task_id)
        return Response(deleted_out(f"Task {task_id} deleted."))


class DagListApi(APIView):
    class FilterSerializer(QuerySerializer):
        filter = QueryTextField(source="pattern")
        sort = QuerySortField(allowed=selectors.DAG_SORTS)

    @extend_schema(
        operation_id="dags_list",
        responses=openapi.DagList,
        parameters=[
            *list_parameters(sorts=selectors.DAG_SORTS),
            query("filter", TEXT, "ids or names: a glob with * or ?, else a substring"),
        ],
    )
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        items, total = paged(selectors.dag_list(**filters.validated_data), page)
        return Response(list_body("dags", [dag_out(d) for d in items], total, page))


class DagDetailApi(APIView):
    FilterSerializer = VersionFilterSerializer

    @extend_schema_serializer(component_name="DagIn")
    class InputSerializer(ObjectBodySerializer):
        name = TextField(required=False)
        description = TextField(required=False)
        tasks = DagTaskListSerializer(child=openapi.DagTask(), allow_empty=False)
        context = TextField(unset=None, required=False, allow_null=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
        tags = TextListField(child=serializers.CharField(), required=False)
        max_active_runs = BoundedIntegerField(
            message="must be an integer >= 1 or null",
            required=False,
            allow_null=True,
            min_value=1,
            help_text="Further runs wait pending (null: no limit).",
        )

    @extend_schema(parameters=[VERSION_PARAM], responses=openapi.DagOut)
    def get(self, request: Request, dag_id: str) -> Response:
        version = _version_param(self.FilterSerializer, request)
        if version is not None:
            return Response(dag_out(selectors.dag_version(dag_id=dag_id, version=version), detail=True))
        return Response(dag_out(selectors.get_or_404(Dag, dag_id, "DAG"), detail=True))

    @extend_schema(responses={200: openapi.DagOut, 201: openapi.DagOut})
    def put(self, request: Request, dag_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        dag, created = services.dag_put(
            actor=actor_name(request.user), dag_id=dag_id, **serializer.validated_data
        )
        return Response(dag_out(dag, detail=True), status=201 if created else 200)

    @extend_schema(responses={200: openapi.Deleted})
    def delete(self, request: Request, dag_id: str) -> Response:
        services.dag_delete(actor=actor_name(request.user), dag_id=dag_id)
        return Response(deleted_out(f"DAG {dag_id} deleted."))


class ContextListApi(APIView):
    @extend_schema(operation_id="contexts_list", responses=openapi.ContextList, parameters=list_parameters())
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(Context.objects.order_by("id"), page)
        return Response(list_body("contexts", [context_out(c) for c in items], total, page))


class ContextDetailApi(APIView):
    @extend_schema_serializer(component_name="ContextIn")
    class InputSerializer(ObjectBodySerializer):
        variables = EnvironmentMapField(required=False)
        extends = TextField(unset=None, required=False, allow_null=True, allow_blank=True)

    @extend_schema(responses=openapi.ContextOut)
    def get(self, request: Request, context_id: str) -> Response:
        return Response(context_out(selectors.get_or_404(Context, context_id, "Context"), detail=True))

    @extend_schema(responses={200: openapi.ContextOut, 201: openapi.ContextOut})
    def put(self, request: Request, context_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        context, created = services.context_put(
            actor=actor_name(request.user), context_id=context_id, **serializer.validated_data
        )
        return Response(context_out(context, detail=True), status=201 if created else 200)


class ParameterSetListApi(APIView):
    @extend_schema(
        operation_id="parameter_sets_list", responses=openapi.ParameterSetList, parameters=list_parameters()
    )
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(ParameterSet.objects.order_by("id"), page)
        return Response(list_body("parameter_sets", [parameter_set_out(p) for p in items], total, page))


class ParameterSetDetailApi(APIView):
    @extend_schema_serializer(component_name="ParameterSetIn")
    class InputSerializer(ObjectBodySerializer):
        # keys are PARAM or <task_id>.<PARAM>; the task id is checked when a schedule uses the set
        parameters = EnvironmentMapField(qualified=True, required=False)

    @extend_schema(responses=openapi.ParameterSetOut)
    def get(self, request: Request, parameter_set_id: str) -> Response:
        pset = selectors.get_or_404(ParameterSet, parameter_set_id, "Parameter set")
        return Response(parameter_set_out(pset, detail=True))

    @extend_schema(responses={200: openapi.ParameterSetOut, 201: openapi.ParameterSetOut})
    def put(self, request: Request, parameter_set_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pset, created = services.parameter_set_put(
            actor=actor_name(request.user), parameter_set_id=parameter_set_id, **serializer.validated_data
        )
        return Response(parameter_set_out(pset, detail=True), status=201 if created else 200)
