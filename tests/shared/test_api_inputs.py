"""The input helpers both services share: StrictCharField, the FilterSerializer base for query
parameters, and the list body shape."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.http import QueryDict
from rest_framework import serializers

from shared.api.errors import ValidationFailed
from shared.api.fields import StrictCharField
from shared.api.pagination import Page, list_body
from shared.api.querying import QueryChoiceField, QuerySerializer, QuerySortField, QueryTimestampField, Sort


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


class Filters(QuerySerializer):
    status = QueryChoiceField(choices=("open", "closed"), message="status must be open or closed")
    createdAfter = QueryTimestampField(source="created_after")  # noqa: N815 (the API's spelling)
    sort = QuerySortField(allowed=("id", "name"))


def test_query_serializer_gives_snake_case_typed_values():
    filters = Filters(data=QueryDict("status=open&createdAfter=2026-01-02&sort=name:desc&other=x"))
    filters.is_valid(raise_exception=True)
    assert filters.validated_data == {
        "status": "open",
        "created_after": datetime(2026, 1, 2, tzinfo=UTC),
        "sort": Sort("name", descending=True),
    }


def test_query_serializer_reads_empty_as_absent():
    filters = Filters(data=QueryDict("status=&sort="))
    filters.is_valid(raise_exception=True)
    assert filters.validated_data == {"status": None, "created_after": None, "sort": None}


def test_query_serializer_reports_the_first_problem_in_its_own_words():
    filters = Filters(data=QueryDict("status=x&createdAfter=soon"))
    with pytest.raises(ValidationFailed) as caught:
        filters.is_valid(raise_exception=True)
    assert caught.value.message == "status must be open or closed"
    assert caught.value.errors == [{"field": "status", "error": "status must be open or closed"}]


def test_list_body_shape():
    assert list_body("things", [1, 2], 7, Page(limit=2, offset=4)) == {
        "things": [1, 2],
        "total": 7,
        "limit": 2,
        "offset": 4,
    }
