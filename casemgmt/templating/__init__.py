"""The one template language of the case service (conditions, prompts, connectors)."""

from casemgmt.templating.renderer import (
    TemplateError,
    check_template,
    condition_holds,
    render,
    to_plain,
)

__all__ = ["TemplateError", "check_template", "condition_holds", "render", "to_plain"]
