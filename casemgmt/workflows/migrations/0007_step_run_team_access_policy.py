# Earlier step runs (rework history) are read only as their case is: the same restrictive
# `team_access` policy as the case's steps.
from django.db import migrations

from casemgmt.tenancy.rls import OF_VISIBLE_CASE, team_policy_migration


class Migration(migrations.Migration):
    dependencies = [
        ("workflows", "0006_merge_access_policy_and_workflow_control"),
    ]

    operations = [team_policy_migration("workflows_steprun", OF_VISIBLE_CASE)]
