"""Task definitions, DAGs, contexts and parameter sets. Bodies are checked by the
services (which list every problem); reads render through the small `*_out` functions below."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.definitions import schemas, selectors, services
from orchestrator.definitions.models import Context, Dag, ParameterSet, TaskDefinition
from orchestrator.definitions.querying import list_body, page_of, paged
from orchestrator.definitions.validation import require_object
from shared.api.time import iso


def task_out(task: TaskDefinition, *, detail: bool = False) -> dict:
    out = {
        "id": task.id,
        "name": task.name,
        "description": task.description,
        "command": task.command,
        "dependencies": task.dependencies,
        "parameters": task.parameters,
        "queue": task.queue,
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


def deleted(message: str) -> Response:
    return Response({"success": True, "message": message})


class TaskListApi(APIView):
    @extend_schema(operation_id="tasks_list", responses=schemas.TaskList)
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(selectors.task_list(params=request.query_params), page)
        return Response(list_body("tasks", [task_out(t) for t in items], total, page))


class TaskDetailApi(APIView):
    @extend_schema(responses=schemas.TaskOut)
    def get(self, request: Request, task_id: str) -> Response:
        return Response(task_out(selectors.get_or_404(TaskDefinition, task_id, "Task"), detail=True))

    @extend_schema(request=schemas.TaskIn, responses={200: schemas.TaskOut, 201: schemas.TaskOut})
    def put(self, request: Request, task_id: str) -> Response:
        task, created = services.task_definition_put(
            task_id=task_id, body=require_object(request.data), default_queue=settings.DEFAULT_TASK_QUEUE
        )
        return Response(task_out(task, detail=True), status=201 if created else 200)

    @extend_schema(responses=schemas.Deleted)
    def delete(self, request: Request, task_id: str) -> Response:
        services.task_definition_delete(task_id=task_id)
        return deleted(f"Task {task_id} deleted.")


class DagListApi(APIView):
    @extend_schema(operation_id="dags_list", responses=schemas.DagList)
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(selectors.dag_list(params=request.query_params), page)
        return Response(list_body("dags", [dag_out(d) for d in items], total, page))


class DagDetailApi(APIView):
    @extend_schema(responses=schemas.DagOut)
    def get(self, request: Request, dag_id: str) -> Response:
        return Response(dag_out(selectors.get_or_404(Dag, dag_id, "DAG"), detail=True))

    @extend_schema(request=schemas.DagIn, responses={200: schemas.DagOut, 201: schemas.DagOut})
    def put(self, request: Request, dag_id: str) -> Response:
        dag, created = services.dag_put(dag_id=dag_id, body=require_object(request.data))
        return Response(dag_out(dag, detail=True), status=201 if created else 200)

    @extend_schema(responses=schemas.Deleted)
    def delete(self, request: Request, dag_id: str) -> Response:
        services.dag_delete(dag_id=dag_id)
        return deleted(f"DAG {dag_id} deleted.")


class ContextListApi(APIView):
    @extend_schema(operation_id="contexts_list", responses=schemas.ContextList)
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(Context.objects.order_by("id"), page)
        return Response(list_body("contexts", [context_out(c) for c in items], total, page))


class ContextDetailApi(APIView):
    @extend_schema(responses=schemas.ContextOut)
    def get(self, request: Request, context_id: str) -> Response:
        return Response(context_out(selectors.get_or_404(Context, context_id, "Context"), detail=True))

    @extend_schema(request=schemas.ContextIn, responses={200: schemas.ContextOut, 201: schemas.ContextOut})
    def put(self, request: Request, context_id: str) -> Response:
        context, created = services.context_put(context_id=context_id, body=require_object(request.data))
        return Response(context_out(context, detail=True), status=201 if created else 200)


class ParameterSetListApi(APIView):
    @extend_schema(operation_id="parameter_sets_list", responses=schemas.ParameterSetList)
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(ParameterSet.objects.order_by("id"), page)
        return Response(list_body("parameter_sets", [parameter_set_out(p) for p in items], total, page))


class ParameterSetDetailApi(APIView):
    @extend_schema(responses=schemas.ParameterSetOut)
    def get(self, request: Request, parameter_set_id: str) -> Response:
        pset = selectors.get_or_404(ParameterSet, parameter_set_id, "Parameter set")
        return Response(parameter_set_out(pset, detail=True))

    @extend_schema(
        request=schemas.ParameterSetIn, responses={200: schemas.ParameterSetOut, 201: schemas.ParameterSetOut}
    )
    def put(self, request: Request, parameter_set_id: str) -> Response:
        pset, created = services.parameter_set_put(
            parameter_set_id=parameter_set_id, body=require_object(request.data)
        )
        return Response(parameter_set_out(pset, detail=True), status=201 if created else 200)
