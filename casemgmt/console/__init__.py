"""The case workers' console: server-rendered pages over the same services and permissions as the API."""
