"""The case console's look and language in a real chromium: every page in German and English, at
a desktop's and a phone's width (375 px: nothing scrolls sideways, stacked tables keep their column
labels), axe-core on every page, times and live announcements in the user's zone, the device's dark
mode followed until the user picks a theme. Screenshots go to var/screenshots/ (console-<lang>-
<page>-<width>.png). One browser and one sign-in for the whole walk."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from selenium.webdriver.common.by import By

from casemgmt.accounts.services import preferences_update
from casemgmt.cases.models import Case
from tests.casemgmt.console.test_browser import (  # noqa: F401 - the module's browser and its per-test driver
    _shot,
    accessible,
    chrome,
    driver,
    live_socket_open,
    shows,
    sign_in,
    until,
)

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = (1280, 375)


def pages(case: dict, language: str) -> list[tuple[str, str, str]]:
    german = language == "de"
    case_id = case["id"]
    return [
        (
            "new-case",
            f"/console/cases/new?type={case['caseTypeKey']}",
            "Fall anlegen" if german else "Start Case",
        ),
        ("inbox", "/console/", "Übernehmen" if german else "Claim"),
        ("task", f"/console/tasks/{case_id}/review", "Pflichtfeld" if german else "required"),
        ("case", f"/console/cases/{case_id}", "Prüfprotokoll" if german else "Audit trail"),
        ("cases", "/console/cases", "Neueste zuerst" if german else "Newest first"),
        ("dashboard", "/console/dashboard", "SLA-Einhaltung" if german else "SLA compliance"),
        ("preferences", "/console/preferences", "Zeitzone" if german else "Time zone"),
    ]


FITS = "return document.documentElement.scrollWidth <= 375"
# Each stacked cell's label (its ::before) next to its column's header text.
LABELS = """
return [...document.querySelectorAll('main table')].filter(t => t.tHead && t.offsetParent).flatMap(t => {
  const names = [...t.tHead.rows[0].cells].map(c => c.textContent.trim());
  return [...t.tBodies[0].rows].flatMap(r => [...r.cells].filter(c => c.colSpan === 1).map((c, i) =>
    [names[i], getComputedStyle(c, '::before').content]));
});
"""


def walk(driver, case: dict, language: str, *, check_accessibility: bool) -> None:  # noqa: F811
    for width in WIDTHS:
        driver.set_window_size(width, 900)
        for name, path, text in pages(case, language):
            driver.get(driver.base + path)
            shows(driver, text)
            where = f"{name} ({language}, {width} px)"
            if width == 375:
                assert driver.execute_script(FITS), f"{where} scrolls sideways"
                for header, label in driver.execute_script(LABELS):
                    assert label == (f'"{header}"' if header else "none"), (
                        f"{where}: {header!r} shown as {label}"
                    )
            if check_accessibility and width == 375:  # the desktop's layout is checked in test_browser
                accessible(driver, where)
            _shot(driver, f"console-{language}-{name}-{width}.png")


def test_every_page_in_german_and_english_on_a_desktop_and_a_phone(driver, waiting_case, admin_user, api):  # noqa: F811
    preferences_update(user=admin_user, changes={"language": "de", "timezone": "Europe/Berlin"})
    sign_in(driver, admin_user)
    shows(driver, "Posteingang", selector="header")
    # Times in the user's zone (Berlin), German order, naming the zone.
    created = Case.objects.get(pk=waiting_case["id"]).created_at.astimezone(ZoneInfo("Europe/Berlin"))
    driver.get(driver.base + "/console/cases")
    shows(driver, f"{created:%d.%m.%Y %H:%M} {created.tzname()}")
    walk(driver, waiting_case, "de", check_accessibility=True)
    for width in WIDTHS:  # the admin in the same family and language (the session is the console's)
        driver.set_window_size(width, 900)
        driver.get(driver.base + "/admin/")
        shows(driver, "Verwaltung", selector="body")  # the index's title, in German
        _shot(driver, f"admin-de-{width}.png")

    # A live announcement: German words, Berlin's clock and zone (not the browser's UTC).
    driver.set_window_size(1280, 900)
    driver.get(driver.base + "/console/")
    live_socket_open(driver)
    from tests.casemgmt.workflows.conftest import Flow

    flow = Flow(api, admin_user)
    flow.workflow([{"id": "inspect", "name": "Inspect site", "type": "task"}])
    flow.case({"amount": 4, "title": "Leaking roof"})
    shows(driver, "Inspect site")
    until(
        driver,
        "return document.getElementById('live-announce').textContent.includes('Aktualisiert:')",
        "the announcement",
    )
    announced = driver.find_element(By.ID, "live-announce").get_attribute("textContent")
    zone = driver.execute_script(
        "return new Intl.DateTimeFormat('de', {timeZone: 'Europe/Berlin', timeZoneName: 'short'})"
        ".formatToParts(new Date()).find(p => p.type === 'timeZoneName').value"
    )
    assert announced.endswith(zone), announced

    # No theme chosen: a device in dark mode gets the tenant's dark theme.
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    try:
        driver.get(driver.base + "/console/")
        shows(driver, "Inspect site")
        assert (
            driver.execute_script("return getComputedStyle(document.body).backgroundColor")
            == "rgb(17, 24, 39)"
        )
        accessible(driver, "inbox, device in dark mode")
        _shot(driver, "console-de-inbox-1280-dark.png")
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    preferences_update(user=admin_user, changes={"language": "en"})
    walk(driver, waiting_case, "en", check_accessibility=False)  # English axe runs in test_browser
