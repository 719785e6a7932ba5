"""JSON Schema violations said in words, with the schema's titles (the console's form errors)."""

from __future__ import annotations

from casemgmt.cases.schema_words import human_errors, label_of

SCHEMA = {
    "type": "object",
    "required": ["amount_claimed", "due_from"],
    "additionalProperties": False,
    "properties": {
        "amount_claimed": {"type": "integer", "title": "Amount claimed", "minimum": 1, "maximum": 5000},
        "due_from": {"type": "string", "format": "date", "title": "Due from"},
        "channel": {"type": "string", "enum": ["mail", "phone"]},
        "reference": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[A-Z]+$"},
        "tags": {"type": "array", "title": "Tags", "items": {"type": "string"}, "maxItems": 1},
        "claimant": {
            "type": "object",
            "title": "Claimant",
            "required": ["name"],
            "properties": {"name": {"type": "string", "title": "Full name"}},
        },
    },
}


def words(data):
    return {e["field"]: e["error"] for e in human_errors(SCHEMA, data)}


def test_required_fields_are_named_by_their_titles():
    assert words({"claimant": {}}) == {
        "data.amount_claimed": "Amount claimed is required",
        "data.due_from": "Due from is required",
        "data.claimant.name": "Full name is required",
    }


def test_types_formats_and_bounds_in_words():
    found = words({"amount_claimed": 1.5, "due_from": "soon", "channel": "fax", "tags": [1, "a"]})
    assert found == {
        "data.amount_claimed": "Amount claimed must be a whole number",
        "data.due_from": "Due from must be a date (YYYY-MM-DD)",
        "data.channel": "Channel must be one of: mail, phone",
        "data.tags": "Tags takes at most 1 entry",
        "data.tags[0]": "Tags, entry 1 must be text",
    }
    assert words({"amount_claimed": 0, "due_from": "2026-01-01"}) == {
        "data.amount_claimed": "Amount claimed must be at least 1"
    }
    assert words({"amount_claimed": 9000, "due_from": "2026-01-01", "reference": "ab"})["data.reference"] in {
        "Reference must be at least 3 characters long",
        "Reference is not in the expected format",
    }


def test_unknown_fields_and_untitled_names():
    found = words({"amount_claimed": 2, "due_from": "2026-01-01", "colour": "red"})
    assert found == {"data": "“colour” is not a known field"}
    assert label_of("due_from", None) == "Due from" and label_of("dueFrom", {}) == "Due from"
    assert label_of("x", {"title": "  "}) == "X"


def test_valid_data_has_no_errors():
    assert human_errors(SCHEMA, {"amount_claimed": 3, "due_from": "2026-01-01"}) == []
