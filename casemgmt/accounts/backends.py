from django.contrib.auth.backends import ModelBackend


class EmailBackend(ModelBackend):
    """Logs in by email, case-insensitively (emails are stored lower-case)."""

    def authenticate(self, request, username=None, password=None, email=None, **kwargs):
        return super().authenticate(
            request, username=(email or username or "").strip().lower(), password=password
        )
