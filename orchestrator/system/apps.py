import psutil
from django.apps import AppConfig


class SystemConfig(AppConfig):
    name = "orchestrator.system"
    label = "orch_system"

    def ready(self) -> None:
        # prometheus reads models, which cannot be imported before the app registry is ready
        from orchestrator.system import prometheus

        prometheus.register()
        psutil.cpu_percent(interval=None)  # primes the counter so the first /api/metrics is meaningful
