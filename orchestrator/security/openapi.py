from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class OrchestratorScheme(OpenApiAuthenticationExtension):
    """Any one of the three credentials is enough (OR), hence a list of single-scheme requirements."""

    target_class = "orchestrator.security.authentication.OrchestratorAuthentication"
    name = ["apiKeyAuth", "bearerAuth", "cookieAuth"]

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list]]:
        return [{name: []} for name in self.name]

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, Any]]:
        return [
            {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            {"type": "apiKey", "in": "cookie", "name": "sessionid"},
        ]
