"""The consoles' templates and translation catalogues, read as files: no multi-line `{# #}` comment
(Django prints those to the page), every catalogue entry translated with the same placeholders,
and the pure-Python compiler writing what gettext reads."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest

from shared.web import messages

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted(
    path
    for service in ("casemgmt", "orchestrator", "shared")
    for path in (ROOT / service).glob("**/templates/**/*.html")
)
CATALOGUES = sorted(
    path for service in ("casemgmt", "orchestrator", "shared") for path in (ROOT / service).glob("**/*.po")
)
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def test_the_templates_and_catalogues_are_found():
    names = {path.name for path in TEMPLATES}
    assert {"base.html", "inbox.html", "runs.html", "base_site.html"} <= names
    assert {path.relative_to(ROOT).parts[0] for path in CATALOGUES} == {"casemgmt", "orchestrator", "shared"}


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_template_comment_spans_lines(path):
    """`{# ... #}` ends on its own line; one that goes on is printed to the page as text."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for opening in re.finditer(r"\{#", line):
            assert "#}" in line[opening.end() :], (
                f"{path.relative_to(ROOT)}:{number} opens a comment it does not close"
            )
        assert "#}" not in re.sub(r"\{#.*?#\}", "", line), (
            f"{path.relative_to(ROOT)}:{number} closes an unopened comment"
        )


def _entries(path: Path) -> list[tuple[str, str, list[str]]]:
    """(msgid, msgid_plural, the translations) for every entry but the header."""
    found = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        parts: dict[str, str] = {}
        field = ""
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            if line.startswith('"'):
                parts[field] += messages._unquote(line)
            else:
                field, _, rest = line.partition(" ")
                parts[field] = messages._unquote(rest)
        if parts.get("msgid"):
            translations = [v for k, v in parts.items() if k.startswith("msgstr")]
            found.append((parts["msgid"], parts.get("msgid_plural", ""), translations))
    return found


@pytest.mark.parametrize("path", CATALOGUES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_string_is_translated_with_its_placeholders(path):
    entries = _entries(path)
    assert entries
    # makemessages guesses a new string's translation from a similar one and marks it fuzzy; the
    # compiler leaves fuzzy entries out, so the page would show English.
    assert "#, fuzzy" not in path.read_text(encoding="utf-8"), (
        f"{path.relative_to(ROOT)} has unchecked guesses"
    )
    for msgid, plural, translations in entries:
        assert translations and all(translations), f"{path.relative_to(ROOT)}: {msgid!r} has no translation"
        wanted = set(PLACEHOLDER.findall(msgid + plural))
        for text in translations:
            assert set(PLACEHOLDER.findall(text)) == wanted, (msgid, text)


TRANSLATE_TAG = re.compile(r"""\{% (?:translate|trans) (["'])(.*?)\1(?: as \w+)? %\}""")
BLOCK_TAG = re.compile(r"\{% blocktranslate(?: with [^%]*?)? %\}(.*?)\{% endblocktranslate %\}", re.S)


def _template_strings(path: Path) -> set[str]:
    """The literal strings a template marks for translation (plain `translate` tags and
    `blocktranslate` blocks without `trimmed`/`count`), as their catalogue ids."""
    text = path.read_text(encoding="utf-8")
    found = {
        match.group(2).replace("%", "%%") for match in TRANSLATE_TAG.finditer(text)
    }  # as Django looks it up
    found |= {
        re.sub(r"\{\{ (\w+) \}\}", r"%(\1)s", match.group(1).replace("%", "%%"))
        for match in BLOCK_TAG.finditer(text)
    }
    return found


@pytest.mark.parametrize(
    "path",
    [p for p in TEMPLATES if "/console/" in str(p) or "/web/" in str(p)],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_marked_template_string_is_in_a_catalogue(path):
    """A string wrapped after the last `make translations` shows in English on a German page."""
    known = {msgid for catalogue in CATALOGUES for msgid, _, _ in _entries(catalogue)}
    missing = _template_strings(path) - known
    assert not missing, f"{path.relative_to(ROOT)}: run `make translations` and translate {sorted(missing)}"


PO = r"""msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

msgid "Sign out"
msgstr "Abmelden"

msgctxt "status"
msgid "Completed"
msgstr "Erledigt"

msgid "%(n)s entry checked"
msgid_plural "%(n)s entries checked"
msgstr[0] "%(n)s Eintrag geprüft"
msgstr[1] "%(n)s Einträge geprüft"

msgid ""
"A long line "
"with \"quotes\""
msgstr ""
"Eine lange Zeile "
"mit \"Anführungszeichen\""

#, fuzzy
msgid "Guessed"
msgstr "Geraten"

msgid "Not yet"
msgstr ""
"""


def test_the_compiler_writes_what_gettext_reads(tmp_path):
    folder = tmp_path / "app" / "locale" / "de" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "django.po").write_text(PO, encoding="utf-8")
    assert messages.compile_all([tmp_path]) == [folder / "django.mo"]
    assert messages.compile_all([tmp_path]) == []  # up to date: not written again
    with (folder / "django.mo").open("rb") as stream:
        catalogue = gettext.GNUTranslations(stream)
    assert catalogue.gettext("Sign out") == "Abmelden"
    assert catalogue.pgettext("status", "Completed") == "Erledigt"
    assert catalogue.gettext("Completed") == "Completed"  # the context is part of the key
    assert catalogue.ngettext("%(n)s entry checked", "%(n)s entries checked", 1) == "%(n)s Eintrag geprüft"
    assert catalogue.ngettext("%(n)s entry checked", "%(n)s entries checked", 5) == "%(n)s Einträge geprüft"
    assert catalogue.gettext('A long line with "quotes"') == 'Eine lange Zeile mit "Anführungszeichen"'
    assert catalogue.gettext("Guessed") == "Guessed"  # fuzzy entries are left out, as msgfmt does
    assert catalogue.gettext("Not yet") == "Not yet"
