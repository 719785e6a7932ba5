"""Run by test_packaging.py with the interpreter of a fresh virtualenv holding only `pip install .`.

Usage: python -I packaging_probe.py <service package> <settings module> [--production]
Loads the service's Celery app (autodiscovery included), then imports every module of the service and
of `shared`, and prints one JSON object: import errors, the tasks autodiscovery registered, the tasks
registered once everything is imported, and the tasks the beat schedule names. The production settings
module refuses to load without its secrets, so the walk leaves it out; `--production` instead runs
under it (with placeholder secrets from the caller) and builds, without connecting, the backends only
production uses: the PostgreSQL connection pool, the Redis cache and the Redis channel layer.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import traceback


def project_tasks(app, packages: tuple[str, ...]) -> list[str]:
    return sorted(name for name in app.tasks if name.startswith(packages))


def walk(package_name: str) -> list[str]:
    package = importlib.import_module(package_name)
    names = [package_name]
    for module in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
        names.append(module.name)
    return names


def production_backends() -> list[str]:
    from django.conf import settings
    from django.core.cache import caches
    from django.db import connections

    built = [type(caches["default"]).__name__]
    if settings.DATABASES["default"].get("OPTIONS", {}).get("pool"):
        built.append(type(connections["default"].pool).__name__)  # opened lazily: no connection
    if "channels" in settings.INSTALLED_APPS:
        from channels.layers import get_channel_layer

        built.append(type(get_channel_layer()).__name__)
    return built


def main() -> int:
    service, settings_module = sys.argv[1], sys.argv[2]
    os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    result: dict = {"errors": {}, "locations": {}}
    celery_module = importlib.import_module(f"{service}.config.celery")
    app = celery_module.app
    import django

    django.setup()
    # What a worker does at start: import the default modules, which runs autodiscovery of every
    # installed app's `tasks` module; a missing dependency raises here.
    app.loader.import_default_modules()
    packages = (f"{service}.", "shared.")
    result["autodiscovered"] = project_tasks(app, packages)
    result["beat"] = sorted(entry["task"] for entry in app.conf.beat_schedule.values())
    if "--production" in sys.argv:
        result["backends"] = production_backends()
    skipped = {f"{service}.config.settings.production"} - {settings_module}
    for top in (service, "shared"):
        result["locations"][top] = importlib.import_module(top).__file__
        for name in walk(top):
            if name in skipped:
                continue
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - every failure is reported, not only the first
                result["errors"][name] = traceback.format_exc(limit=3)
    result["all_tasks"] = project_tasks(app, packages)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
