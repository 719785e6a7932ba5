"""YAML definition files: one document, a YAML stream of documents (`---`), lists of documents, or
a mix, per file; every document is a mapping with a `kind`. Files are read in name order (`*.yaml`,
`*.yml`, in subfolders too) so a plan lists the same folder the same way every time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from shared.api.errors import ApplicationError, ValidationFailed

SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Document:
    file: str  # the path as the user named it (relative to the folder given)
    index: int  # position in the file, from 0
    body: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def where(self) -> str:
        """How an error names the document: the file, and the document's number when it is not the first."""
        return self.file if self.index == 0 else f"{self.file}#{self.index + 1}"


def definition_files(folder: Path) -> list[Path]:
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise ValidationFailed(f"{folder}: no such folder", field="dir")
    return sorted(p for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file())


def read_documents(folder: Path) -> list[Document]:
    """Every document of every file, or a ValidationFailed naming the file that is not valid YAML
    or holds something other than mappings with a `kind`."""
    documents: list[Document] = []
    root = folder if folder.is_dir() else folder.parent
    for path in definition_files(folder):
        name = str(path.relative_to(root))
        documents += _file_documents(path, name)
    return documents


def _file_documents(path: Path, name: str) -> list[Document]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"{name}: not UTF-8 text ({exc})", field=name) from None
    return parse_documents(name, text)


class _JsonLoader(yaml.SafeLoader):
    """YAML that means what the same JSON would: no aliases (a few lines could expand into
    gigabytes once written out) and no implicit timestamps (dates stay the strings the API reads)."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", mark)
        return super().compose_node(parent, index)


def _json_like(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_like(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def parse_documents(name: str, text: str) -> list[Document]:
    """The documents of one file's text (`name` is how errors name the file)."""
    try:
        loaded = [d for d in yaml.load_all(text, Loader=_JsonLoader) if d is not None]  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise ValidationFailed(f"{name}: not valid YAML ({exc})".replace("\n", " "), field=name) from None
    # A document that is a list holds several definitions (numbered on, as if they were a stream).
    loaded = [item for d in loaded for item in (d if isinstance(d, list) else [d])]
    if not _json_like(loaded):
        raise ValidationFailed(
            f"{name}: only JSON values (string keys; no dates, sets or binary)", field=name
        )
    documents = []
    for index, body in enumerate(loaded):
        document = Document(name, index, body if isinstance(body, dict) else {})
        if not isinstance(body, dict) or not isinstance(body.get("kind"), str):
            raise ValidationFailed(
                f"{document.where}: each document must be a mapping with a kind",
                field=f"{document.where}.kind",
            )
        documents.append(document)
    return documents


def dump_documents(bodies: list[dict[str, Any]]) -> str:
    """A YAML stream in the order given, keys in the order given (kind first reads best)."""
    return yaml.safe_dump_all(
        bodies, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
    )


def located(exc: Exception, where: str) -> ApplicationError:
    """The error a document caused (a serializer's or a service's), of the same class and code,
    each field prefixed with the document it came from (`file.yaml#2:command`)."""
    # Imported here: the `caseflow` command line reads folders with this module and no Django set up.
    from shared.api.handler import to_application_error

    error = to_application_error(exc)
    if error is None:
        raise exc
    problems = error.errors or [{"field": "", "error": error.message}]
    located_errors = [
        {"field": f"{where}:{p.get('field') or ''}".rstrip(":"), "error": p["error"]} for p in problems
    ]
    first = located_errors[0]
    located_error = type(error)(f"{first['field']}: {first['error']}", errors=located_errors)
    located_error.code = error.code
    return located_error


class _Validated(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def document(self) -> Document: ...


ItemT = TypeVar("ItemT", bound=_Validated)


def validated_items(
    documents: list[Document],
    item_of: Callable[[Document], ItemT],
    *,
    kind_of: Callable[[ItemT], str],
    id_field_of: Callable[[ItemT], str],
) -> dict[tuple[str, str], ItemT]:
    """Every document validated by `item_of`, and every problem of every file (a bad field, an id
    defined twice) in one error, each named by its file and field: a sync applies all or nothing."""
    items: dict[tuple[str, str], ItemT] = {}
    problems: list[dict[str, str]] = []
    for document in documents:
        try:
            item = item_of(document)
        except Exception as exc:  # noqa: BLE001 - located() keeps ours and re-raises anything else
            problems += located(exc, document.where).errors
            continue
        key = (kind_of(item), item.id)
        if key in items:
            problems.append({"field": f"{document.where}:{id_field_of(item)}",
                             "error": f"{key[0]} {key[1]} is also defined in {items[key].document.where}"})  # fmt: skip
        items[key] = item
    if problems:
        raise ValidationFailed.from_errors(problems)
    return items
