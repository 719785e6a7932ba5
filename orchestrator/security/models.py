from django.db import models


class ApiKey(models.Model):
    ROLES = [("viewer", "viewer"), ("operator", "operator"), ("admin", "admin")]

    name = models.CharField(max_length=100, unique=True)
    role = models.CharField(max_length=10, choices=ROLES)
    prefix = models.CharField(max_length=32)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.role})"
