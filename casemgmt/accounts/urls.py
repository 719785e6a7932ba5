from django.urls import path

from casemgmt.accounts import apis

urlpatterns = [
    path("auth/login", apis.LoginApi.as_view(), name="auth-login"),
    path("auth/logout", apis.LogoutApi.as_view(), name="auth-logout"),
]
