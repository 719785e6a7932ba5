"""axe-core (4.14.1, `axe.min.js` from the npm package `axe-core`, vendored in tests/support/vendor)
run inside a page a Selenium driver has open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE_SOURCE = Path(__file__).parent / "vendor" / "axe-4.14.1.min.js"
BLOCKING = ("serious", "critical")

_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]})
  .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                             nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))))
  .catch(e => done([{id: "axe-error", impact: "critical", help: String(e), nodes: []}]));
"""


def violations(driver: Any) -> list[dict[str, Any]]:
    """The page's serious and critical accessibility violations (axe's WCAG 2 A/AA and best
    practice rules). axe is injected into the page as it is now, so call it after the content
    under test is shown."""
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(AXE_SOURCE.read_text())
    driver.set_script_timeout(60)
    found = driver.execute_async_script(_RUN)
    return [v for v in found if v["impact"] in BLOCKING]
