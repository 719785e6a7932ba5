"""The one Python client of the two services' HTTP APIs: `OrchestratorClient` (used by the case
service's `dag` step and by the `caseflow` command line) and `CaseClient` (the command line).
Plain HTTP only: it imports neither service, so anything may use it."""
