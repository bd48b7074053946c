"""The audit report: metrics.json, summary.md and a self-contained report.html whose plots really render
(checked in headless Chromium when it is installed: `apt-get install -y chromium`)."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.metrics import compute_metrics
from rewardsmith.audit.report import render_html, render_markdown, write_report
from rewardsmith.audit.runner import AuditRunner, load_verdicts
from tests.support.audit_scripted_judge import ScriptedJudge

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

IMG_CHECK = """
<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.querySelectorAll('img.plot'));
  const marker = document.createElement('div');
  marker.id = 'audit-img-check';
  marker.setAttribute('data-total', String(imgs.length));
  marker.setAttribute('data-decoded', String(imgs.filter(i => i.complete && i.naturalWidth > 0).length));
  marker.setAttribute('data-widths', imgs.map(i => i.naturalWidth + 'x' + i.naturalHeight).join(','));
  document.body.appendChild(marker);
});
</script>
"""


@pytest.fixture(scope="module")
def biased_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit-report")
    items = generate_set("mixed", 60, seed=5)
    judge = ScriptedJudge({it.prompt: it.gold_response for it in items}, first=0.5, longer=0.3, seed=1)
    AuditRunner(judge, items, out, perturbations=["verbosity", "distraction"], progress=False).run()
    metrics = compute_metrics(items, load_verdicts(out), self_model=judge.model, n_boot=300)
    metrics["run"] = {"judge": judge.model, "set_name": "mixed (generated)", "set_hash": "ab" * 32}
    return out, metrics, write_report(out, metrics)


def _pngs(html: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)]


def test_outputs_are_written_and_consistent(biased_report):
    _, metrics, paths = biased_report
    assert json.loads(paths["metrics"].read_text()) == json.loads(json.dumps(metrics))
    summary = paths["summary"].read_text()
    assert "**HIGH** position bias" in summary and "length bias" in summary
    assert "| position | swap consistency |" in summary
    assert "no bias flagged" not in summary


def test_html_is_self_contained_with_three_decodable_plots(biased_report):
    import matplotlib.image as mpimg

    html = biased_report[2]["html"].read_text()
    pngs = _pngs(html)
    assert len(pngs) == 3
    for png in pngs:
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        pixels = mpimg.imread(io.BytesIO(png), format="png")
        assert pixels.shape[0] > 200 and pixels.shape[1] > 300 and float(np.std(pixels)) > 0.05
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", html)  # nothing fetched from outside
    assert "Findings" in html and "position bias" in html


def test_report_of_an_unbiased_judge_says_so_and_a_run_without_verdicts_still_renders(tmp_path):
    items = generate_set("format", 12, seed=0)
    judge = ScriptedJudge({it.prompt: it.gold_response for it in items})
    AuditRunner(judge, items, tmp_path, progress=False).run()
    metrics = compute_metrics(items, load_verdicts(tmp_path), n_boot=200)
    assert "no bias flagged" in render_markdown(metrics)
    assert "No bias flagged." in render_html(metrics)
    empty = compute_metrics(items, {}, n_boot=50)
    assert empty["n_judged"] == 0 and empty["flags"] == []
    assert "Judge bias audit" in render_html(empty) and _pngs(render_html(empty)) == []


def _chromium() -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        print("skipping browser render check: chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return binary


def test_report_renders_in_headless_chromium(biased_report, tmp_path):
    binary = _chromium()
    html = biased_report[2]["html"].read_text()
    page = tmp_path / "report_check.html"
    page.write_text(html.replace("</body>", IMG_CHECK + "</body>"))
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [
            binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    marker = re.search(r'id="audit-img-check" data-total="(\d+)" data-decoded="(\d+)" data-widths="([^"]*)"', dom)
    assert marker, dom[-2000:]
    total, decoded, widths = int(marker[1]), int(marker[2]), marker[3].split(",")
    assert total == decoded == 3
    assert all(int(w.split("x")[0]) > 300 for w in widths)

    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile2'}",
            f"--screenshot={shot}",
            "--window-size=1100,1800",
            biased_report[2]["html"].as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (1800, 1100)
    assert float(np.std(pixels[..., :3])) > 0.05  # not a blank page
    # the red bars of the flagged biases are on screen
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.4) & (pixels[..., 2] < 0.4)
    assert red.sum() > 500


def test_a_report_from_python_names_the_judge_the_set_and_its_hash(tmp_path):
    """compute_metrics + write_report (the Python path) carry no run record: the header reads the run's manifest."""
    items = generate_set("format", 6, seed=0)
    judge = ScriptedJudge({it.prompt: it.gold_response for it in items}, model="scripted-judge-7")
    AuditRunner(judge, items, tmp_path, progress=False).run()
    paths = write_report(tmp_path, compute_metrics(items, load_verdicts(tmp_path), n_boot=50))
    manifest = json.loads((tmp_path / "run.json").read_text())
    for text in (paths["summary"].read_text(), paths["html"].read_text()):
        assert "scripted-judge-7" in text and manifest["set_hash"][:16] in text and "items given in Python" in text
        assert "?" not in re.findall(r"(?:judge|set hash)\W+(\S+)", text)
