"""Compiles the translation catalogues (`locale/<lang>/LC_MESSAGES/*.po` -> `.mo`) in pure Python.

Django's `compilemessages` needs GNU gettext's `msgfmt`, which a fresh machine may lack; this does
the same for the subset of the PO format the catalogues use (contexts, plurals, multi-line
strings; fuzzy entries are left out, as msgfmt does). `make install` and the test run call it; a
`.mo` is rewritten only when its `.po` is newer. Standard library only (it runs before Django is
set up).

    python -m shared.web.messages [root ...]
"""

from __future__ import annotations

import ast
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("casemgmt", "orchestrator", "shared")


def _unquote(line: str) -> str:
    return str(ast.literal_eval(line))  # a PO string is a C string literal: "..." with \n, \", \\


def parse(text: str) -> dict[bytes, bytes]:
    """The catalogue's translated entries, keyed as a `.mo` file keys them."""
    entries: dict[bytes, bytes] = {}
    entry: dict[str, str] = {}
    fuzzy = False
    field = ""

    def flush() -> None:
        nonlocal entry, fuzzy
        if "msgid" in entry and (not fuzzy or entry["msgid"] == ""):  # the header always counts
            _add(entries, entry)
        entry, fuzzy = {}, False

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#,") and "fuzzy" in line:
            if "msgid" in entry and "msgstr" in "".join(entry):
                flush()
            fuzzy = True
        elif not line or line.startswith("#"):
            if not line and entry:
                flush()
        elif line.startswith('"'):
            entry[field] += _unquote(line)
        else:
            keyword, _, rest = line.partition(" ")
            if keyword == "msgctxt" or (keyword == "msgid" and any(k.startswith("msgstr") for k in entry)):
                flush()
            field = keyword
            entry[field] = _unquote(rest)
    flush()
    return entries


def _add(entries: dict[bytes, bytes], entry: dict[str, str]) -> None:
    key = entry["msgid"]
    if "msgctxt" in entry:
        key = f"{entry['msgctxt']}\x04{key}"
    if "msgid_plural" in entry:
        key = f"{key}\x00{entry['msgid_plural']}"
        forms = [entry[k] for k in sorted((k for k in entry if k.startswith("msgstr[")), key=_plural_index)]
        value = "\x00".join(forms)
        if not any(forms):
            return
    else:
        value = entry.get("msgstr", "")
        if not value:  # untranslated: the source text shows
            return
    entries[key.encode()] = value.encode()


def _plural_index(name: str) -> int:
    return int(name[len("msgstr[") : -1])


def mo_bytes(entries: dict[bytes, bytes]) -> bytes:
    """GNU `.mo` layout: header, the sorted originals' table, the translations' table, the strings."""
    keys = sorted(entries)
    count = len(keys)
    originals_at = 7 * 4
    translations_at = originals_at + count * 8
    data_at = translations_at + count * 8
    tables, blob = [], b""
    for strings in (keys, [entries[k] for k in keys]):
        table = []
        for value in strings:
            table.append((len(value), data_at + len(blob)))
            blob += value + b"\x00"
        tables.append(table)
    header = struct.pack("<7I", 0x950412DE, 0, count, originals_at, translations_at, 0, data_at)
    return header + b"".join(struct.pack("<2I", *pair) for table in tables for pair in table) + blob


def compile_tree(root: Path) -> list[Path]:
    """Writes each stale `.mo` under `root`; returns the ones written."""
    written = []
    for po in sorted(root.glob("**/locale/*/LC_MESSAGES/*.po")):
        mo = po.with_suffix(".mo")
        if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        # Written aside and renamed: parallel test processes compile at once, and a reader never
        # sees half a file.
        part = mo.with_name(f"{mo.name}.{os.getpid()}.part")
        part.write_bytes(mo_bytes(parse(po.read_text(encoding="utf-8"))))
        os.replace(part, mo)
        written.append(mo)
    return written


def compile_all(roots: list[Path] | None = None) -> list[Path]:
    written: list[Path] = []
    for root in roots or [ROOT / name for name in SOURCES]:
        written += compile_tree(root)
    return written


if __name__ == "__main__":
    done = compile_all([Path(arg) for arg in sys.argv[1:]] or None)
    print(f"compiled {len(done)} translation catalogue(s)")
