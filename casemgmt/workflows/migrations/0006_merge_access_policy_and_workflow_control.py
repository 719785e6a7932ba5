# Two migrations made side by side (team access policy, workflow control step types); they touch
# different columns and policies, so their order does not matter.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("workflows", "0005_team_access_policy"),
        ("workflows", "0005_workflow_control"),
    ]

    operations = []
