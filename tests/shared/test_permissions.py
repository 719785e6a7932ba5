import pytest

from shared.auth.permissions import has_all, has_permission, is_valid_permission, permission_matches

KNOWN = ["cases:read", "cases:create", "admin:users", "admin:roles", "workflows:read", "workflows:write"]


@pytest.mark.parametrize(
    ("granted", "required", "expected"),
    [
        ("*", "cases:read", True),
        ("*", "admin:users", True),
        ("cases:read", "cases:read", True),
        ("cases:read", "cases:create", False),
        ("admin:*", "admin:users", True),
        ("admin:*", "admin:roles", True),
        ("admin:*", "audit:read", False),
        ("admin:*", "administrator:x", False),  # prefix must end at the colon
        ("workflows:*", "workflows:*", True),
        ("workflows:*", "workflows:publish", True),
        ("cases:*", "casesx:read", False),
        ("cases", "cases:read", False),
        ("", "cases:read", False),
    ],
)
def test_permission_matches(granted, required, expected):
    assert permission_matches(granted, required) is expected


def test_union_of_roles_grants_each_permission():
    granted = ["cases:read", "admin:*"]
    assert has_permission(granted, "admin:roles")
    assert has_all(granted, ["cases:read", "admin:users"])
    assert not has_all(granted, ["cases:read", "cases:update"])


def test_no_grants_match_nothing():
    assert not has_permission([], "cases:read")


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("*", True),
        ("cases:read", True),
        ("admin:*", True),
        ("workflows:*", True),
        ("cases:fly", False),
        ("nope:*", False),
        ("", False),
    ],
)
def test_permission_validation(value, valid):
    assert is_valid_permission(value, KNOWN) is valid
