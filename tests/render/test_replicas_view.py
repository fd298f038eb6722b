"""``replicas --view OUT.html``: the page's data for the unclean-election sample (its JSON parsed back),
copy names that are markup, the output rules (no overwrite without --force, atomic), the bands' bound;
and in a browser (Debian's chromium, as tests/render/test_view_browser.py) that the strips render."""

from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.view_helpers import page_data
from wireinspect.cli import cli

B1, B2 = SAMPLES / "replicas" / "broker-1", SAMPLES / "replicas" / "broker-2"
HOSTILE = '<img src=x onerror="window.pwned=1">'


def run(*args):
    return CliRunner().invoke(cli, ["replicas", *map(str, args)])


def replicas_page(path):
    text = path.read_text(encoding="utf-8")
    return text, page_data(text)["replicas"]


def test_sample_page_holds_the_expected_bands(tmp_path):
    out = tmp_path / "r.html"
    r = run("--view", out, B1, B2)
    assert r.exit_code == 1, r.output  # the copies differ in committed data, as without --view
    assert "HEADLINE" in r.stdout  # the report is still printed
    _, parts = replicas_page(out)
    (p,) = parts
    assert p["partition"] == "orders-0" and p["term"] == "leaderEpoch" and p["axis"] == [0, 20]
    c1, c2 = p["copies"]
    assert (c1["name"], c1["logStart"], c1["logEnd"], c1["highWatermark"]) == ("broker 1", 0, 20, 20)
    assert (c2["name"], c2["logStart"], c2["logEnd"], c2["highWatermark"]) == ("broker 2", 0, 18, 18)
    assert [b[:6] for b in c1["bands"]] == [[0, 9, "same", 0, 0, 10], [10, 19, "epoch", 1, 1, 10]]
    assert [b[:6] for b in c2["bands"]] == [[0, 9, "same", 0, 0, 10], [10, 17, "epoch", 2, 2, 8]]
    assert "epoch_differs vs broker 2" in c1["bands"][1][6]
    assert [(t["leader"], t["to"], t["rule"], t["committedLost"]) for t in c1["truncations"]] == \
        [("broker 2", 10, "diverging-epoch", 10)]
    assert [(t["leader"], t["to"], t["committedLost"]) for t in c2["truncations"]] == [("broker 1", 10, 8)]
    assert p["divergences"] == [{"copies": ["broker 1", "broker 2"], "offset": 10, "reason": "epoch_differs",
                                 "holder": "broker 1"}]


def test_leader_narrows_the_truncation_marks(tmp_path):
    out = tmp_path / "r.html"
    assert run("--leader", "2", "--view", out, B1 / "orders-0", B2 / "orders-0").exit_code == 1
    c1, c2 = replicas_page(out)[1][0]["copies"]
    assert [t["to"] for t in c1["truncations"]] == [10] and c2["truncations"] == []


def test_copy_names_are_escaped(tmp_path):
    a = tmp_path / HOSTILE / "orders-0"  # no meta.properties: the copy is named by its path
    shutil.copytree(B1 / "orders-0", a)
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    r = run("--view", out, a, B2 / "orders-0")
    assert r.exit_code == 1, r.output
    text, parts = replicas_page(out)
    assert "<img" not in text and "onerror=\"" not in text
    assert parts[0]["copies"][0]["name"] == str(a)  # the JSON keeps the name; the script sets it as text


def test_output_rules(tmp_path):
    out = tmp_path / "r.html"
    out.write_text("keep")
    r = run("--view", out, B1, B2)
    assert r.exit_code == 2 and "--force" in r.stderr and out.read_text() == "keep"
    assert run("--view", out, "--force", B1, B2).exit_code == 1 and "wi-data" in out.read_text()
    assert run("--force", B1, B2).exit_code == 2  # --force without --view
    assert run("--view", "-", B1, B2).exit_code == 2
    r = run("--view", B1 / "orders-0" / "r.html", B1, B2)  # never beside an input
    assert r.exit_code == 2 and not (B1 / "orders-0" / "r.html").exists()
    assert sorted(os.listdir(tmp_path)) == ["r.html"]  # no temp file left


def test_bands_are_bounded():
    from wireinspect.formats.replica import Copy, Entry
    from wireinspect.ops.replview import MAX_BANDS, bands

    n = 3 * MAX_BANDS
    c = Copy(path="x", name="x", entries=[Entry(i * 2, i * 2, 1, b"", True, "f", 0, 1, 1) for i in range(n)])
    marks = {"y": ([i * 4 for i in range(n // 2)], [(i * 4, i * 4, "epoch", "why") for i in range(n // 2)])}
    bs, binned = bands(c, marks, (0, 2 * n))
    assert binned and len(bs) <= MAX_BANDS
    assert sum(b[5] for b in bs) == n and {b[2] for b in bs} == {"epoch"}  # the worst state of each bin


# -- in a browser ----------------------------------------------------------------------------------

from tests.render.test_view_browser import WHY_NOT, _open, browser  # noqa: E402,F401 - the shared fixture


@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
def test_strips_render_in_a_browser(browser, tmp_path):  # noqa: F811
    a = tmp_path / HOSTILE / "orders-0"
    shutil.copytree(B1 / "orders-0", a)
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    assert run("--view", out, a, B2 / "orders-0").exit_code == 1
    parts = replicas_page(out)[1]
    page, errors, requests = _open(browser, out)
    try:
        assert page.eval_on_selector_all(".rstrip", "s => s.length") == 2
        n = page.eval_on_selector_all(".rstrip", "s => s.map(x => x.querySelectorAll('.band').length)")
        assert n == [len(c["bands"]) for c in parts[0]["copies"]]
        names = page.eval_on_selector_all(".copy-name", "s => s.map(x => x.textContent)")
        assert names == [str(a), "broker 2"]
        assert page.evaluate("window.pwned") is None
        assert page.eval_on_selector_all(".rstrip .trunc", "s => s.length") == 2
        hws = [c["highWatermark"] for c in parts[0]["copies"]]
        assert hws == [None, 18]  # the copy moved out of its broker's directory has no checkpoint
        assert page.eval_on_selector_all(".rstrip .hw", "s => s.length") == 1
        page.click(".rstrip[data-copy='1'] .band[data-band='1']")
        detail = page.text_content(".replica-detail")
        assert "offsets 10..17" in detail and "epoch_differs vs" in detail
        box = page.eval_on_selector(".rstrip[data-copy='0'] .band[data-band='1']",
                                    "e => [e.getBoundingClientRect().width, e.parentNode.getBoundingClientRect().width]")
        assert 0.45 < box[0] / box[1] < 0.55  # offsets 10..19 of the axis 0..19
        assert not page.is_visible("#tree")
        assert errors == [] and all(u.startswith("file:") for u in requests)
    finally:
        page.close()


def test_bit_flip_marks_the_corrupt_copy_and_the_good_one(tmp_path):
    fx = SAMPLES.parent / "tests" / "formats" / "kafka" / "replicas" / "fixtures" / "bit-flip"
    out = tmp_path / "r.html"
    assert run("--view", out, fx / "broker-1", fx / "broker-2").exit_code == 1
    c1, c2 = replicas_page(out)[1][0]["copies"]
    assert [b[:3] for b in c1["bands"]] == [[0, 5, "same"], [6, 9, "bytes"], [10, 19, "same"]]
    assert [b[:3] for b in c2["bands"]] == [[0, 5, "same"], [6, 9, "corrupt"], [10, 19, "same"]]
    assert "the good copy: broker 1" in c2["bands"][1][6]
