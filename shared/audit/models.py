"""Abstract append-only audit event. A service subclasses it and names the chain (a tenant id)."""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.db import models

GENESIS_HASH = "sha256:" + "0" * 64
ERASED_HASH = GENESIS_HASH


class AuditEventBase(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    chain = models.CharField(max_length=64, db_index=True)
    sequence = models.BigIntegerField()
    timestamp = models.DateTimeField(db_index=True)
    actor = models.CharField(max_length=255, db_index=True)
    action = models.CharField(max_length=64, db_index=True)
    resource = models.CharField(max_length=255, db_index=True)
    changes = models.JSONField(default=dict)
    hash = models.CharField(max_length=71)
    previous_hash = models.CharField(max_length=71)
    erased = models.BooleanField(default=False)
    # Marks the events of an actor who has been disabled. It lies outside the hashed entry, so setting
    # or clearing it never breaks the chain; the append-only trigger lets only this column change.
    deleted = models.BooleanField(default=False)

    # Declared here so that code written against any concrete chain (`type[AuditEventBase]`) has a
    # typed manager; each subclass inherits it.
    objects = models.Manager()

    # PostgreSQL: a chain whose table has the function of `shared.audit.services.append_function_sql`
    # installed names it here, with the extra columns it takes (in order); appends then take one
    # round trip instead of three. None keeps the ORM append (and SQLite always uses it).
    APPEND_FUNCTION: ClassVar[str | None] = None
    APPEND_EXTRA_COLUMNS: ClassVar[tuple[str, ...]] = ()

    class Meta:
        abstract = True
        ordering = ("chain", "sequence")


class AuditCheckpointBase(models.Model):
    """A signed statement that a chain's event at `sequence` had hash `head_hash` at `created_at`
    (`shared.audit.checkpoints`). Rows are written once; `witnessed_at` records that every outside
    witness has its copy, and is not part of what is signed."""

    id = models.BigAutoField(primary_key=True)
    chain = models.CharField(max_length=64)
    sequence = models.BigIntegerField()
    head_hash = models.CharField(max_length=71)
    created_at = models.DateTimeField()
    key_id = models.CharField(max_length=64)
    signature = models.CharField(max_length=100)
    witnessed_at = models.DateTimeField(null=True, blank=True)

    objects = models.Manager()

    class Meta:
        abstract = True
        ordering = ("chain", "sequence")
