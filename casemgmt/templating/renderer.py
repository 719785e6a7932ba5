"""A small, sandboxed Handlebars subset: `{{path}}`, helpers, `#if`/`#unless`/`#each` blocks.

Why our own parser rather than pybars3: pybars resolves unknown names with `getattr` (so
`{{case_data.keys}}` reaches `dict.keys`, `{{x.__class__}}` a Python class) and compiles templates to
Python source. Here the context is first converted to plain JSON values and names are only ever
looked up as dict keys or list indexes, so no Python attribute is reachable. Output size,
loop iterations and nesting are bounded.

Differences from Handlebars, on purpose: no HTML escaping (templates produce prompts, JSON and
plain text), and a name not found in the current `#each` item is looked up in the enclosing scopes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from shared.api.time import iso

MAX_TEMPLATE_CHARS = 100_000
MAX_OUTPUT_CHARS = 200_000
MAX_ITERATIONS = 10_000
MAX_NESTING = 32
MAX_CONTEXT_DEPTH = 64


class TemplateError(ValueError):
    """A template that cannot be parsed, or a render that broke a limit."""


# ---------------------------------------------------------------------------- plain context


def to_plain(value: Any, _depth: int = 0) -> Any:
    """JSON-typed copy of `value`: the only kinds of object a template can ever see."""
    if _depth > MAX_CONTEXT_DEPTH:
        raise TemplateError("context nested too deeply")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {str(k): to_plain(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v, _depth + 1) for v in value]
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, UUID):
        return str(value)
    return str(value)


# ---------------------------------------------------------------------------- syntax tree


@dataclass
class Path:
    parents: int  # how many `../`
    segments: list[str]
    this: bool = False  # `this`/`.` prefix: no lookup in enclosing scopes
    data: bool = False  # `@index`, `@key`, `@first`, `@last`, `@root`


@dataclass
class Literal:
    value: Any


@dataclass
class Call:
    helper: str
    args: list[Any]


@dataclass
class Output:
    expr: Any


@dataclass
class Block:
    helper: str
    expr: Any
    body: list[Any] = field(default_factory=list)
    inverse: list[Any] = field(default_factory=list)


BLOCK_HELPERS = ("if", "unless", "each")
TOKEN_RE = re.compile(r"""\s*(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s()"']+))""")
NUMBER_RE = re.compile(r"-?\d+(\.\d+)?$")
NAME_RE = re.compile(r"^[A-Za-z_@$][\w$-]*$|^\d+$")


def _tags(source: str) -> list[tuple[str, str, int]]:
    """Splits the source into ("text", s) and ("tag", inner) pieces."""
    pieces: list[tuple[str, str, int]] = []
    pos = 0
    while True:
        start = source.find("{{", pos)
        if start < 0:
            pieces.append(("text", source[pos:], pos))
            return pieces
        pieces.append(("text", source[pos:start], pos))
        if source.startswith("{{!--", start):
            end, close = source.find("--}}", start), "--}}"
        elif source.startswith("{{{", start):
            end, close = source.find("}}}", start), "}}}"
        else:
            end, close = source.find("}}", start), "}}"
        if end < 0:
            raise TemplateError(f"unclosed '{{{{' at offset {start}")
        inner = source[start + 2 : end]
        if close == "}}}":
            inner = inner[1:]
        pieces.append(("tag", inner.strip().strip("~").strip(), start))
        pos = end + len(close)


def _lex(expr: str, offset: int) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    pos = 0
    expr = expr.rstrip()
    while pos < len(expr):
        match = TOKEN_RE.match(expr, pos)
        if not match or match.end() == pos:
            raise TemplateError(f"cannot read expression {expr!r} at offset {offset}")
        pos = match.end()
        lparen, rparen, dq, sq, word = match.groups()
        if lparen:
            tokens.append(("(", None))
        elif rparen:
            tokens.append((")", None))
        elif dq is not None or sq is not None:
            raw = dq if dq is not None else sq
            tokens.append(("lit", re.sub(r"\\(.)", r"\1", raw)))
        else:
            tokens.append(("word", word))
    return tokens


def _word(word: str, offset: int) -> Any:
    if word in ("true", "false"):
        return Literal(word == "true")
    if word in ("null", "undefined"):
        return Literal(None)
    if NUMBER_RE.match(word):
        return Literal(float(word) if "." in word else int(word))
    return _path(word, offset)


def _path(word: str, offset: int) -> Path:
    parents = 0
    while word.startswith("../"):
        parents, word = parents + 1, word[3:]
    this = False
    if word in ("this", "."):
        return Path(parents, [], this=True)
    for prefix in ("this.", "this/", "./"):
        if word.startswith(prefix):
            this, word = True, word[len(prefix) :]
    segments = re.split(r"[./]", word)
    for segment in segments:
        if not NAME_RE.match(segment):
            raise TemplateError(f"invalid name {word!r} at offset {offset}")
    data = segments[0].startswith("@")
    return Path(parents, segments, this=this, data=data)


def _parse_args(
    tokens: list[tuple[str, Any]], pos: int, offset: int, until: str | None
) -> tuple[list[Any], int]:
    args: list[Any] = []
    while pos < len(tokens):
        kind, value = tokens[pos]
        if kind == ")":
            if until != ")":
                raise TemplateError(f"unbalanced ')' at offset {offset}")
            return args, pos + 1
        if kind == "(":
            inner, pos = _parse_args(tokens, pos + 1, offset, ")")
            args.append(_call(inner, offset))
            continue
        args.append(Literal(value) if kind == "lit" else _word(value, offset))
        pos += 1
    if until == ")":
        raise TemplateError(f"missing ')' at offset {offset}")
    return args, pos


def _call(parts: list[Any], offset: int) -> Call:
    if not parts or not isinstance(parts[0], Path) or len(parts[0].segments) != 1 or parts[0].this:
        raise TemplateError(f"a sub-expression must start with a helper name at offset {offset}")
    name = parts[0].segments[0]
    if name not in HELPERS:
        raise TemplateError(f"unknown helper {name!r} at offset {offset}")
    return Call(name, parts[1:])


def _expression(text: str, offset: int) -> Any:
    parts, _ = _parse_args(_lex(text, offset), 0, offset, None)
    if not parts:
        raise TemplateError(f"empty expression at offset {offset}")
    if len(parts) == 1 and not (
        isinstance(parts[0], Path)
        and parts[0].segments[:1]
        and parts[0].segments[0] in HELPERS
        and len(parts[0].segments) == 1
    ):
        return parts[0]
    return _call(parts, offset)


def parse(source: str) -> list[Any]:
    if len(source) > MAX_TEMPLATE_CHARS:
        raise TemplateError(f"template longer than {MAX_TEMPLATE_CHARS} characters")
    root: list[Any] = []
    stack: list[tuple[Block, list[Any]]] = []
    current = root
    for kind, text, offset in _tags(source):
        if kind == "text":
            if text:
                current.append(text)
        elif text.startswith("!"):
            continue
        elif text.startswith("#"):
            current = _open_block(text, offset, stack, current)
        elif text.startswith("/"):
            name = text[1:].strip()
            if not stack or stack[-1][0].helper != name:
                raise TemplateError(f"unexpected {{{{/{name}}}}} at offset {offset}")
            current = stack.pop()[1]
        elif text in ("else", "^"):
            if not stack or current is stack[-1][0].inverse:
                raise TemplateError(f"unexpected {{{{else}}}} at offset {offset}")
            current = stack[-1][0].inverse
        else:
            current.append(Output(_expression(text, offset)))
    if stack:
        raise TemplateError(f"unclosed {{{{#{stack[-1][0].helper}}}}}")
    return root


def _open_block(
    text: str, offset: int, stack: list[tuple[Block, list[Any]]], current: list[Any]
) -> list[Any]:
    """`{{#helper args}}`: appends the block to `current`, pushes it, and returns its body (the list
    that the following nodes go into)."""
    name, _, rest = text[1:].strip().partition(" ")
    if name not in BLOCK_HELPERS:
        raise TemplateError(f"unknown block helper {name!r} at offset {offset}")
    if len(stack) >= MAX_NESTING:
        raise TemplateError("blocks nested too deeply")
    block = Block(name, _expression(rest, offset))
    current.append(block)
    stack.append((block, current))
    return block.body


# ---------------------------------------------------------------------------- helpers


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(op: str):
    def compare(a: Any, b: Any) -> bool:
        if _number(a) and _number(b) or isinstance(a, str) and isinstance(b, str):
            return {"gt": a > b, "lt": a < b, "gte": a >= b, "lte": a <= b}[op]
        return False

    return compare


def _equals(a: Any, b: Any) -> bool:
    if _number(a) and _number(b):
        return a == b
    return type(a) is type(b) and a == b


class Raw(str):
    """Helper output that is already text (json)."""


HELPERS: dict[str, Any] = {
    "json": lambda value=None: Raw(json.dumps(value, ensure_ascii=False, separators=(",", ":"))),
    "equals": _equals,
    "eq": _equals,
    "gt": _compare("gt"),
    "lt": _compare("lt"),
    "gte": _compare("gte"),
    "lte": _compare("lte"),
    "not": lambda value=None: not truthy(value),
    "and": lambda *values: all(truthy(v) for v in values),
    "or": lambda *values: any(truthy(v) for v in values),
}


def truthy(value: Any) -> bool:
    """Handlebars truthiness: null, false, "", 0 and [] are false."""
    return not (
        value is None or value is False or value == "" or value == [] or (_number(value) and value == 0)
    )


# ---------------------------------------------------------------------------- evaluation


@dataclass
class Frame:
    value: Any
    parent: Frame | None
    data: dict[str, Any] = field(default_factory=dict)


class _Renderer:
    def __init__(self, root: Any, max_output: int, max_iterations: int) -> None:
        self.root = root
        self.out: list[str] = []
        self.size = 0
        self.iterations = 0
        self.max_output = max_output
        self.max_iterations = max_iterations

    def emit(self, text: str) -> None:
        self.size += len(text)
        if self.size > self.max_output:
            raise TemplateError(f"rendered output longer than {self.max_output} characters")
        self.out.append(text)

    def nodes(self, nodes: list[Any], frame: Frame) -> None:
        for node in nodes:
            if isinstance(node, str):
                self.emit(node)
            elif isinstance(node, Output):
                self.emit(stringify(self.value(node.expr, frame)))
            else:
                self.block(node, frame)

    def block(self, block: Block, frame: Frame) -> None:
        value = self.value(block.expr, frame)
        if block.helper == "if":
            self.nodes(block.body if truthy(value) else block.inverse, frame)
        elif block.helper == "unless":
            self.nodes(block.inverse if truthy(value) else block.body, frame)
        else:
            self.each(block, value, frame)

    def each(self, block: Block, value: Any, frame: Frame) -> None:
        if isinstance(value, dict):
            items = [(key, item, {"key": key}) for key, item in value.items()]
        elif isinstance(value, list):
            items = [(index, item, {}) for index, item in enumerate(value)]
        else:
            items = []
        if not items:
            self.nodes(block.inverse, frame)
            return
        for index, (_, item, data) in enumerate(items):
            self.iterations += 1
            if self.iterations > self.max_iterations:
                raise TemplateError(f"more than {self.max_iterations} loop iterations")
            data.update(index=index, first=index == 0, last=index == len(items) - 1)
            self.nodes(block.body, Frame(item, frame, data))

    def value(self, expr: Any, frame: Frame) -> Any:
        if isinstance(expr, Literal):
            return expr.value
        if isinstance(expr, Call):
            args = [self.value(arg, frame) for arg in expr.args]
            try:
                return HELPERS[expr.helper](*args)
            except TypeError:
                raise TemplateError(f"wrong number of arguments for {expr.helper}") from None
        return self.lookup(expr, frame)

    def lookup(self, path: Path, frame: Frame) -> Any:
        for _ in range(path.parents):
            frame = frame.parent or frame
        segments = list(path.segments)
        if path.data:
            head = segments.pop(0)[1:]
            if head == "root":
                return walk(self.root, segments)
            scope: Frame | None = frame
            while scope is not None and head not in scope.data:
                scope = scope.parent
            return walk(scope.data[head], segments) if scope else None
        if path.this or not segments:
            return walk(frame.value, segments)
        scope = frame
        while scope is not None:  # the nearest scope that has the first name
            if isinstance(scope.value, dict) and segments[0] in scope.value:
                return walk(scope.value, segments)
            scope = scope.parent
        return None


def walk(value: Any, segments: list[str]) -> Any:
    """Dict keys and list indexes only; never a Python attribute."""
    for segment in segments:
        if isinstance(value, dict):
            value = value.get(segment)
        elif isinstance(value, list):
            if segment == "length":
                value = len(value)
            elif segment.isdigit() and int(segment) < len(value):
                value = value[int(segment)]
            else:
                return None
        else:
            return None
    return value


def stringify(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_CACHE: dict[str, list[Any]] = {}


def compiled(source: str) -> list[Any]:
    tree = _CACHE.get(source)
    if tree is None:
        tree = parse(source)
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[source] = tree
    return tree


def check_template(source: str) -> None:
    """Raises TemplateError when the template does not parse."""
    compiled(source)


def render(
    source: str,
    context: dict[str, Any],
    *,
    max_output: int = MAX_OUTPUT_CHARS,
    max_iterations: int = MAX_ITERATIONS,
) -> str:
    tree = compiled(source)
    plain = to_plain(context)
    renderer = _Renderer(plain, max_output, max_iterations)
    renderer.nodes(tree, Frame(plain, None))
    return "".join(renderer.out)


def condition_source(condition: str) -> str:
    """A condition is a template; a bare expression (`gt case_data.amount 10`) is wrapped in braces."""
    return condition if "{{" in condition else "{{" + condition + "}}"


def condition_holds(condition: str, context: dict[str, Any]) -> bool:
    """True when the rendered text is non-empty and not `false`/`0`."""
    text = render(condition_source(condition), context).strip()
    return text not in ("", "false", "0")
