"""The template renderer: its variables and helpers, and a sandbox hostile templates cannot leave."""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal

import pytest

from casemgmt.templating import TemplateError, check_template, condition_holds, render, to_plain

CTX = {
    "case_data": {
        "applicant": {"name": "Ann O'Neil <ann@x>"},
        "amount": 1500,
        "status": "open",
        "items": [{"name": "bike"}, {"name": "lamp"}],
        "tags": [],
        "flags": {"a": 1, "b": 2},
    },
    "step_results": {"review": {"approved": True, "score": 0}},
    "case_number": "IC-000042",
    "now": "2026-11-22T10:00:00.000Z",
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{case_data.applicant.name}}", "Ann O'Neil <ann@x>"),  # no HTML escaping
        ("{{{case_data.applicant.name}}}", "Ann O'Neil <ann@x>"),
        ("{{case_number}} at {{now}}", "IC-000042 at 2026-11-22T10:00:00.000Z"),
        ("{{json case_data.items}}", '[{"name":"bike"},{"name":"lamp"}]'),
        ("{{json step_results.review}}", '{"approved":true,"score":0}'),
        ("{{#if (gt case_data.amount 1000)}}big{{else}}small{{/if}}", "big"),
        ("{{#if (gt case_data.amount 2000)}}big{{else}}small{{/if}}", "small"),
        ('{{#unless (equals case_data.status "x")}}not x{{/unless}}', "not x"),
        ('{{#unless (equals case_data.status "open")}}not open{{else}}open{{/unless}}', "open"),
        ("{{#each case_data.items}}{{this.name}};{{/each}}", "bike;lamp;"),
        (
            "{{#each case_data.items}}{{@index}}:{{name}}{{#if @last}}.{{else}},{{/if}}{{/each}}",
            "0:bike,1:lamp.",
        ),
        ("{{#each case_data.flags}}{{@key}}={{this}} {{/each}}", "a=1 b=2 "),
        ("{{#each case_data.tags}}x{{else}}none{{/each}}", "none"),
        ("{{#each case_data.items}}{{case_number}}{{/each}}", "IC-000042IC-000042"),  # outer scope
        ("{{#each case_data.items}}{{../case_number}}{{/each}}", "IC-000042IC-000042"),
        ("{{case_data.items.1.name}} {{case_data.items.length}}", "lamp 2"),
        ("{{case_data.missing.deep}}|{{case_data.items.9}}", "|"),
        (
            "{{lt 1 2}} {{lte 2 2}} {{gte 1 2}} {{equals 1 1.0}} {{equals 1 true}}",
            "true true false true false",
        ),
        ('{{gt "b" "a"}} {{gt "b" 1}}', "true false"),
        ("{{!-- a comment --}}{{! short }}ok", "ok"),
        ("{{step_results.review.approved}} {{step_results.review.score}}", "true 0"),
        ('{{#if (and (gt case_data.amount 1) (not (equals case_data.status "x")))}}y{{/if}}', "y"),
    ],
)
def test_renders_the_spec_language(template, expected):
    assert render(template, CTX) == expected


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("gt case_data.amount 1000", True),
        ("{{gt case_data.amount 10000}}", False),
        ("{{#if case_data.tags}}yes{{/if}}", False),
        ("step_results.review.score", False),  # renders "0"
        ("step_results.review.approved", True),
        ("case_data.missing", False),
        ("{{case_data.status}}", True),
        ("  false ", False),
    ],
)
def test_conditions(condition, expected):
    assert condition_holds(condition, CTX) is expected


class Secret:
    password = "hunter2"

    def __str__(self) -> str:
        return "secret-object"


@pytest.mark.parametrize(
    "template",
    [
        "{{case_data.__class__}}",
        "{{case_data.keys}}",
        "{{case_data.items.__len__}}",
        "{{case_data.status.upper}}",
        "{{case_data.amount.real}}",
        "{{case_data.__class__.__mro__}}",
        "{{case_data.applicant.__dict__}}",
        "{{obj.password}}",
        "{{@root.case_data.__init__.__globals__}}",
    ],
)
def test_no_python_attribute_is_reachable(template):
    ctx = {**CTX, "obj": Secret()}
    assert render(template, ctx) in ("", "secret-object")
    assert "hunter2" not in render(template, ctx)


def test_objects_are_reduced_to_plain_json_values():
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    ident = uuid.uuid4()
    plain = to_plain({"w": when, "u": ident, "d": Decimal("1.5"), "o": Secret(), "t": (1, 2), 3: "x"})
    assert plain == {
        "w": "2026-01-02T03:04:05.000Z",
        "u": str(ident),
        "d": 1.5,
        "o": "secret-object",
        "t": [1, 2],
        "3": "x",
    }
    assert render("{{o.password}}|{{o}}", {"o": Secret()}) == "|secret-object"


@pytest.mark.parametrize(
    "template",
    [
        "{{#if x}}open",
        "{{/if}}",
        "{{#each x}}{{/if}}",
        "{{#with x}}{{/with}}",
        "{{unknownhelper x y}}",
        "{{x",
        "{{(gt 1 2}}",
        "{{}}",
        "{{#if x}}{{else}}{{else}}{{/if}}",
        "{{a b.c!}}",
    ],
)
def test_malformed_templates_are_refused(template):
    with pytest.raises(TemplateError):
        check_template(template)


def test_loop_iterations_are_bounded():
    ctx = {"xs": list(range(200))}
    hostile = "{{#each xs}}{{#each ../xs}}{{#each ../../xs}}.{{/each}}{{/each}}{{/each}}"
    with pytest.raises(TemplateError, match="iterations"):
        render(hostile, ctx)


def test_output_size_is_bounded():
    ctx = {"big": "x" * 10_000, "xs": list(range(100))}
    with pytest.raises(TemplateError, match="output"):
        render("{{#each xs}}{{big}}{{big}}{{big}}{{/each}}", ctx, max_output=100_000)


def test_template_size_and_nesting_are_bounded():
    with pytest.raises(TemplateError):
        check_template("x" * 100_001)
    with pytest.raises(TemplateError, match="nested"):
        check_template("{{#if a}}" * 40 + "{{/if}}" * 40)


def test_deeply_nested_context_is_refused():
    deep: dict = {}
    node = deep
    for _ in range(100):
        node["n"] = {}
        node = node["n"]
    with pytest.raises(TemplateError):
        render("{{n}}", deep)
