#!/usr/bin/env python
"""Orchestrator command line (migrate, create_api_key, ...)."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.config.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
