from django.db import migrations

from shared.audit.services import install_trigger_operation


class Migration(migrations.Migration):
    dependencies = [("orch_audit", "0001_initial")]

    operations = [install_trigger_operation("orch_audit_auditevent")]
