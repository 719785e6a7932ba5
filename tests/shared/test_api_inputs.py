"""The input helpers both services share: StrictCharField, Problems and ProblemsSerializer, and the
list body shape."""

from __future__ import annotations

import re

import pytest
from rest_framework import serializers

from shared.api.errors import ValidationFailed
from shared.api.fields import StrictCharField
from shared.api.pagination import Page, list_body
from shared.api.problems import Problems, ProblemsSerializer

NAME = re.compile(r"^[A-Z]+$")


class Named(serializers.Serializer):
    name = StrictCharField(max_length=5)


@pytest.mark.parametrize("value", [3, 2.5, True, ["a"], {"a": "b"}])
def test_strict_char_field_refuses_what_is_not_a_string(value):
    serializer = Named(data={"name": value})  # a plain CharField would turn 3 into "3"
    assert not serializer.is_valid()
    assert serializer.errors["name"] == ["Must be a string."]


def test_strict_char_field_keeps_char_field_rules():
    assert Named(data={"name": "abc"}).is_valid()
    assert not Named(data={"name": "abcdef"}).is_valid()  # max_length still applies


class Body(ProblemsSerializer):
    def read(self, body: dict, problems: Problems) -> dict:
        return {
            "title": problems.string(body, "title", required=True),
            "tags": problems.string_list(body, "tags"),
            "env": problems.string_map(body.get("env"), "env", key_pattern=NAME),
        }


def test_problems_serializer_lists_every_problem_in_one_error():
    serializer = Body(data={"tags": "x", "env": {"lower": "1", "OK": True}})
    with pytest.raises(ValidationFailed) as caught:
        serializer.is_valid(raise_exception=True)
    errors = caught.value.errors
    assert errors == [
        {"field": "title", "error": "This field is required."},
        {"field": "tags", "error": "must be an array of strings"},
        {"field": "env.lower", "error": "names must match [A-Z]+"},
        {"field": "env.OK", "error": "must be a string"},
    ]
    assert caught.value.message == "title: This field is required."


def test_problems_serializer_returns_what_read_returns():
    serializer = Body(data={"title": "t", "env": {"A": 1}})
    serializer.is_valid(raise_exception=True)
    assert serializer.validated_data == {"title": "t", "tags": [], "env": {"A": "1"}}


@pytest.mark.parametrize("body", [[1], "text", None, 3])
def test_problems_serializer_refuses_a_body_that_is_not_an_object(body):
    with pytest.raises(ValidationFailed, match="must be a JSON object"):
        Body(data=body).is_valid(raise_exception=True)


def test_list_body_shape():
    assert list_body("things", [1, 2], 7, Page(limit=2, offset=4)) == {
        "things": [1, 2],
        "total": 7,
        "limit": 2,
        "offset": 4,
    }
