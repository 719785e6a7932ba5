from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class OrchestratorScheme(OpenApiAuthenticationExtension):
    target_class = "orchestrator.security.authentication.OrchestratorAuthentication"
    name = "apiKeyAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "apiKey", "in": "header", "name": "X-API-Key"}
