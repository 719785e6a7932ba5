"""OpenAPI shapes of the audit checkpoint responses (documentation only: views build plain dicts)."""

from rest_framework import serializers


class CheckpointOut(serializers.Serializer):
    scheme = serializers.CharField(help_text="audit-checkpoint/v1")
    log = serializers.CharField(help_text="the service whose chain this is")
    chain = serializers.CharField()
    sequence = serializers.IntegerField(help_text="position of the signed head event")
    headHash = serializers.CharField()  # noqa: N815 - the wire name
    createdAt = serializers.DateTimeField()  # noqa: N815
    keyId = serializers.CharField()  # noqa: N815
    signature = serializers.CharField(
        help_text="base64 Ed25519 signature over the canonical JSON of the other fields"
    )


class CheckpointKeyOut(serializers.Serializer):
    keyId = serializers.CharField()  # noqa: N815
    algorithm = serializers.CharField()
    publicKey = serializers.CharField(help_text="base64 of the raw 32-byte public key")  # noqa: N815
    signing = serializers.BooleanField(help_text="signs new checkpoints")


class CheckpointKeysOut(serializers.Serializer):
    keys = CheckpointKeyOut(many=True)


class _InvalidCheckpointOut(serializers.Serializer):
    sequence = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    key_id = serializers.CharField()
    reason = serializers.CharField()


class CheckpointReportOut(serializers.Serializer):
    mode = serializers.ChoiceField(choices=["full", "checkpoint"])
    checked = serializers.IntegerField(help_text="checkpoints checked")
    valid = serializers.BooleanField()
    verified_from = serializers.IntegerField(help_text="the event walk started after this sequence")
    first_invalid = _InvalidCheckpointOut(allow_null=True)
