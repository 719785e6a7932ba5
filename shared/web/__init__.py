"""Browser-facing helpers shared by both services: the offline API docs page and the
Content-Security-Policy every HTML page carries."""
