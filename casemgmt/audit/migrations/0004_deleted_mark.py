from django.db import migrations, models

from shared.audit.services import install_trigger_operation


class Migration(migrations.Migration):
    dependencies = [("audit", "0003_resource_prefix_index")]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="deleted",
            field=models.BooleanField(default=False),
        ),
        # The append-only trigger learns its one new allowance: flipping `deleted` alone.
        install_trigger_operation("audit_auditevent", drop_on_reverse=False),
    ]
