"""`orchestrator`: the tenant's connection to an orchestrator, used by `dag` workflow steps.

Not callable as a connector step (a `dag` step schedules, waits and resumes on the orchestrator's
signed callback; see casemgmt/dags). Its configuration: the orchestrator's base `url`, an `apiKey`
with the admin role (the step registers its callback webhook, which needs admin), the
`webhookSecret` the orchestrator signs callbacks with, and optionally `callbackUrl`, the address
the orchestrator should call back (default: this service's public base URL +
/webhooks/orchestrator/<tenant id>).
"""

from __future__ import annotations

from casemgmt.connectors.base import Connector, Input


class OrchestratorConnector(Connector):
    key = "orchestrator"
    display_name = "Orchestrator"
    description = "Runs orchestrator DAGs and tasks from `dag` workflow steps."
    requires_auth = True
    invocable = False
    config_keys = {
        "url": Input("string", required=True, description="orchestrator base URL"),
        "apiKey": Input("string", required=True, description="admin API key (X-API-Key)"),
        "webhookSecret": Input("string", required=True, description="HMAC secret of the callbacks"),
        "callbackUrl": Input("string", description="where the orchestrator calls back"),
    }
    secret_keys = frozenset({"apiKey", "webhookSecret"})


CONNECTOR = OrchestratorConnector()
