"""YAML definition files: one document, a YAML stream of documents (`---`) or a list of documents
per file; every document is a mapping with a `kind`. Files are read in name order (`*.yaml`,
`*.yml`, in subfolders too) so a plan lists the same folder the same way every time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from shared.api.errors import ValidationFailed

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
        loaded = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValidationFailed(f"{name}: not valid YAML ({exc})".replace("\n", " "), field=name) from None
    if len(loaded) == 1 and isinstance(loaded[0], list):
        loaded = loaded[0]
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
