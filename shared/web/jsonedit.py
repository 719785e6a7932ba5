"""A JSON document edited in a form (the Django admin's case-type schemas and workflow drafts):
shown pretty-printed in a multi-line monospace text area, parsed on save, and refused with the
line and column of a syntax error so the editor can find it. What was typed stays in the box after
an error (Django's JSONField keeps invalid input). The document's own rules (a JSON Schema, a
workflow's publish checks) are the service's: its form checks them after parsing."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _


class JSONEditorWidget(forms.Textarea):
    """A monospace, unwrapped text area (styled by `textarea.json-editor` in shared_web/admin.css)."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        defaults = {"class": "json-editor", "rows": 24, "cols": 100, "spellcheck": "false"}
        super().__init__({**defaults, **(attrs or {})})


class PrettyJSONField(forms.JSONField):
    """JSON shown indented by two spaces; a syntax error names its line and column."""

    widget = JSONEditorWidget
    default_error_messages = {
        "invalid": _("Not valid JSON at line %(line)s, column %(column)s: %(reason)s."),
    }

    def to_python(self, value: Any) -> Any:
        if self.disabled or not isinstance(value, str) or value in self.empty_values:
            return super().to_python(value)
        try:
            return json.loads(value, cls=self.decoder)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                self.error_messages["invalid"],
                code="invalid",
                params={"line": exc.lineno, "column": exc.colno, "reason": exc.msg},
            ) from None

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value  # what was typed, unchanged, so it can be corrected
        return json.dumps(value, indent=2, ensure_ascii=False, cls=self.encoder)
