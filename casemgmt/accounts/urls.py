from django.urls import path

from casemgmt.accounts import apis

urlpatterns = [
    path("auth/login", apis.LoginApi.as_view(), name="auth-login"),
    path("auth/logout", apis.LogoutApi.as_view(), name="auth-logout"),
    path("auth/password", apis.PasswordChangeApi.as_view(), name="auth-password"),
    path("auth/password/set", apis.PasswordSetApi.as_view(), name="auth-password-set"),
    path("auth/me", apis.MeApi.as_view(), name="auth-me"),
    path("users/me/out-of-office", apis.MyOutOfOfficeApi.as_view(), name="my-out-of-office"),
    path("users/<uuid:user_id>", apis.UserDetailApi.as_view(), name="user-detail"),
    path("users/<uuid:user_id>/out-of-office", apis.UserOutOfOfficeApi.as_view(), name="user-out-of-office"),
    path("auth/preferences", apis.PreferencesApi.as_view(), name="auth-preferences"),
    path("admin/principals", apis.PrincipalListCreateApi.as_view(), name="principals"),
    path("admin/principals/<uuid:principal_id>", apis.PrincipalUpdateApi.as_view(), name="principal"),
    path(
        "admin/principals/<uuid:principal_id>/disable",
        apis.PrincipalDisableApi.as_view(),
        name="principal-disable",
    ),
    path(
        "admin/principals/<uuid:principal_id>/enable",
        apis.PrincipalEnableApi.as_view(),
        name="principal-enable",
    ),
    path("admin/roles", apis.RoleListCreateApi.as_view(), name="roles"),
    path(
        "admin/roles/<uuid:role_id>/permissions", apis.RolePermissionsApi.as_view(), name="role-permissions"
    ),
]
