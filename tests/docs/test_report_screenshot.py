"""The screenshot of the bias-audit report on docs/audit.md, taken in headless Chromium from the report the audit
tests render (a scripted judge with injected position and length biases), and checked to show that report."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the report's plots need the 'audit' extra: pip install 'rewardsmith[audit]'")

from tests.audit.test_audit_report import CHROMIUM_FLAGS, _chromium, biased_report  # noqa: F401  (the fixture)

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOT = DOCS / "img" / "audit_report.png"


@pytest.mark.slow
def test_report_screenshot_for_the_docs(biased_report, tmp_path):  # noqa: F811
    binary = _chromium()
    shot = tmp_path / "audit_report.png"
    subprocess.run(
        [
            binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--hide-scrollbars",
            "--window-size=1100,1400",
            "--virtual-time-budget=10000",
            biased_report[2]["html"].as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (1400, 1100)
    assert float(np.std(pixels[..., :3])) > 0.05  # not a blank page
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.4) & (pixels[..., 2] < 0.4)
    assert red.sum() > 500  # the red bars of the flagged biases are on screen
    SHOT.parent.mkdir(exist_ok=True)
    SHOT.write_bytes(shot.read_bytes())
    assert "img/audit_report.png" in (DOCS / "audit.md").read_text()
