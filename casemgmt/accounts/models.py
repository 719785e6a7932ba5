"""Principals (human users and agents) and roles, each belonging to one tenant."""

from __future__ import annotations

import uuid

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models

from casemgmt.tenancy.models import Tenant
from shared.api.errors import InvalidState

KNOWN_PERMISSIONS = (
    "cases:create", "cases:read", "cases:update", "cases:delete",
    "tasks:read", "tasks:claim", "tasks:complete", "tasks:assign",
    "reports:read", "reports:create",
    "admin:users", "admin:roles", "admin:tenant", "admin:case_types", "admin:erasure", "admin:audit",
    "audit:read",
    "vault:read", "vault:upload", "vault:delete", "vault:download",
    "connectors:read", "connectors:test",
    "agents:read", "agents:write",
    "workflows:read", "workflows:write", "workflows:publish",
)  # fmt: skip

DEFAULT_ROLES = {
    "admin": ("Admin", ["*"]),
    "workflow_designer": ("Workflow Designer", ["workflows:*", "cases:read"]),
    "case_worker": (
        "Case Worker",
        [
            "cases:read",
            "cases:update",
            "tasks:claim",
            "tasks:complete",
            "vault:download",
            "vault:upload",
        ],
    ),
    "viewer": ("Viewer", ["cases:read", "vault:download"]),
}


class Role(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="roles")
    name = models.CharField(max_length=100)
    display_name = models.CharField(max_length=200)
    permissions = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("created_at", "name")
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="role_unique_name_per_tenant")]

    def __str__(self) -> str:
        return self.display_name


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **fields: object) -> User:
        user = self.model(email=self.normalize_email(email).lower(), **fields)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **fields: object) -> User:
        fields.setdefault("is_staff", True)
        fields.setdefault("is_superuser", True)
        return self.create_user(email, password, **fields)


class User(AbstractBaseUser, PermissionsMixin):
    KIND_HUMAN = "human"
    KIND_AGENT = "agent"
    KINDS = [(KIND_HUMAN, "Human"), (KIND_AGENT, "Agent")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Superusers (platform operators) may have no tenant; every API principal has one.
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="users", null=True, blank=True)
    email = models.EmailField(unique=True)
    display_name = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=10, choices=KINDS, default=KIND_HUMAN)
    roles = models.ManyToManyField(Role, related_name="users", blank=True)
    preferences = models.JSONField(default=dict, blank=True)
    api_key_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    api_key_prefix = models.CharField(max_length=32, blank=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Carried in every JWT as `gen`; bumping it (password change or set) invalidates older tokens.
    token_generation = models.PositiveIntegerField(default=0)
    # Claimed by the welcome-email task so a redelivered task never sends twice.
    welcome_sent_at = models.DateTimeField(null=True, blank=True)
    # Out of office: from `away_from` (inclusive) until `away_until` (exclusive) assignments to
    # this user go to `away_delegate`, or stay unassigned without one (docs/teams.md).
    away_from = models.DateTimeField(null=True, blank=True)
    away_until = models.DateTimeField(null=True, blank=True)
    away_delegate = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS = []  # typed by AbstractBaseUser

    objects = UserManager()

    class Meta:
        ordering = ("created_at", "email")

    def __str__(self) -> str:
        return self.email

    def get_permission_strings(self) -> set[str]:
        """The union of the user's roles' permissions, read fresh (role edits apply next request)."""
        cached = getattr(self, "_permission_strings", None)
        if cached is None:
            cached = set()
            for role in self.roles.all():
                cached.update(role.permissions)
            self._permission_strings = cached
        return cached

    @property
    def member_tenant_id(self) -> uuid.UUID:
        """The tenant of an API principal. Only platform superusers, who use the Django admin alone,
        have none; reaching a tenant-scoped write or read without one is a 409, never a cross-tenant
        query on a null tenant."""
        if self.tenant_id is None:
            raise InvalidState("Platform operators belong to no tenant.")
        return self.tenant_id

    @property
    def member_tenant(self) -> Tenant:
        if self.tenant is None:
            raise InvalidState("Platform operators belong to no tenant.")
        return self.tenant

    @property
    def role_names(self) -> list[str]:
        return [role.name for role in self.roles.all()]

    @property
    def rls_teams(self) -> str:
        """The database's `app.team_ids` for this principal's requests: every team for holders of
        `admin:*`, else the ids of its teams (which case types' `accessTeams` may name)."""
        granted = self.get_permission_strings()
        if "*" in granted or "admin:*" in granted:
            return "*"
        cached: list[uuid.UUID] | None = getattr(self, "_team_ids", None)
        if cached is None:
            cached = list(TeamMembership.objects.filter(user=self).values_list("team_id", flat=True))
            self._team_ids = cached
        return ",".join(str(team_id) for team_id in cached)


class Team(models.Model):
    """A group of users of one tenant that tasks name as their candidates (`team` on a task step)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    members: models.ManyToManyField[User, TeamMembership] = models.ManyToManyField(
        User, through="TeamMembership", related_name="teams"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="team_unique_name_per_tenant")]

    def __str__(self) -> str:
        return self.name


class TeamMembership(models.Model):
    # tenant_id on the row itself: the tenant isolation policy covers every table that has one.
    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="team_memberships")
    lead = models.BooleanField(default=False)
    added_at = models.DateTimeField(auto_now_add=True)
    # When a strategy last gave this member a task of the team (least_loaded breaks ties by it).
    last_assigned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("added_at", "id")
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="team_member_unique")]

    def __str__(self) -> str:
        return f"{self.team_id}/{self.user_id}"


class RevokedToken(models.Model):
    """A logged-out JWT, by its `jti`, kept until the token would have expired anyway. The database
    is the only record, so a cache or Redis restart never brings a logged-out token back."""

    jti = models.CharField(max_length=64, primary_key=True)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.jti


class LoginThrottle(models.Model):
    """Failed logins of one subject (a hashed email or a client IP) in a fixed window that starts
    with the first failure. Kept in the database so a lockout survives losing the cache."""

    key = models.CharField(max_length=255, primary_key=True)
    failures = models.PositiveIntegerField(default=0)
    window_ends_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.key
