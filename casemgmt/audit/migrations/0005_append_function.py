from django.db import migrations

from shared.audit.services import install_append_function_operation


class Migration(migrations.Migration):
    dependencies = [("audit", "0004_deleted_mark")]

    operations = [install_append_function_operation("audit_auditevent", {"tenant_id": "uuid"})]
