"""Progress bars for the long steps, shown only when standard error is a terminal."""

from __future__ import annotations

import sys

from tqdm import tqdm


def progress_bar(*, total: int, description: str, enabled: bool = True) -> tqdm:
    return tqdm(
        total=total,
        desc=description,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        leave=False,
        disable=not (enabled and sys.stderr.isatty()),
    )
