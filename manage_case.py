#!/usr/bin/env python
"""Case service command line (migrate, create_tenant, backup, ...)."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casemgmt.config.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
