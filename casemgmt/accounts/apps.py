from django.apps import AppConfig
from django.utils.translation import gettext_lazy

from casemgmt.accounts import openapi  # noqa: F401 - importing it registers the OpenAPI auth extension


class AccountsConfig(AppConfig):
    name = "casemgmt.accounts"
    verbose_name = gettext_lazy("Accounts")
    label = "accounts"

    def ready(self) -> None:
        from django.db.models.signals import m2m_changed, post_delete, post_save

        # Django's ready() idiom: models are imported once the app registry is ready, since
        # importing them with this module would loop back into app loading.
        from casemgmt.accounts import authentication, models

        forget_cached_principals = authentication.forget_cached_principals
        RevokedToken, Role, User = models.RevokedToken, models.Role, models.User

        # Any change to what a credential stands for drops the cached principals of this process.
        for model in (User, Role, RevokedToken):
            post_save.connect(
                forget_cached_principals, sender=model, dispatch_uid=f"principals-{model.__name__}"
            )
            post_delete.connect(
                forget_cached_principals, sender=model, dispatch_uid=f"principals-del-{model.__name__}"
            )
        m2m_changed.connect(
            forget_cached_principals, sender=User.roles.through, dispatch_uid="principals-roles"
        )
