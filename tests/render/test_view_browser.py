"""``view``'s page in a real browser: Debian's headless chromium driven by Playwright (no browser
download), the page opened from disk. Skipped, saying why, when /usr/bin/chromium or the playwright
package is absent, unless WIREINSPECT_BROWSER_REQUIRED is set (CI: .ci/run installs chromium)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import SAMPLES
from tests.view_helpers import big_segment, hostile_segment, padded_index, page_data, view

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
DAMAGED = SAMPLES / "damaged" / "00000000000000000000.log"


def _why_not() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is not installed (apt-get install chromium; .ci/run does)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install '.[test]')"
    return None


WHY_NOT = _why_not()
if WHY_NOT and os.environ.get("WIREINSPECT_BROWSER_REQUIRED"):
    raise RuntimeError(f"browser tests required but cannot run: {WHY_NOT}")
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    profile = tmp_path_factory.mktemp("chromium-profile")
    ctx = pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True, args=ARGS,
                                                viewport={"width": 1500, "height": 900}, offline=True)
    yield ctx
    ctx.close()
    pw.stop()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """``name -> (path of the page, its data)`` for the damaged sample, a gzip segment, a capture,
    the hostile segment, a partition directory, an index with zero padding (a note) and a segment
    with a batch longer than the 64 KiB the page embeds."""
    d = tmp_path_factory.mktemp("view-pages")
    hostile = d / "in" / '<img src=x onerror="window.pwned=1">.log'  # a name that is markup too
    hostile.parent.mkdir()
    hostile.write_bytes(hostile_segment())
    big = d / "in" / "big" / "00000000000000000000.log"
    big.parent.mkdir()
    big.write_bytes(big_segment())
    out = {}
    for name, path in (("damaged", DAMAGED), ("gzip", SAMPLES / "v2-gzip" / "00000000000000000000.log"),
                       ("capture", SAMPLES / "capture" / "librdkafka.pcap"), ("hostile", f"{hostile}:kafka-log"),
                       ("partition", SAMPLES / "partition" / "orders-0"),
                       ("notes", padded_index(d / "in")), ("big", big)):
        page = d / f"{name}.html"
        r = view(path, "-o", page)
        assert r.exit_code in (0, 1), r.output
        out[name] = (page, page_data(page.read_text()))
    return out


def _open(browser, path):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, errors, requests


def _lit(page, pane=0, cls="hl"):
    return page.eval_on_selector_all(f"#pane-{pane} .hx.{cls}", "cs => cs.map(c => +c.dataset.p)")


def _selected(page):
    return page.eval_on_selector(".node.sel", "e => [+e.dataset.i, e.querySelector('.name').textContent]")


def _unit(page):
    return page.eval_on_selector(".unit.sel", "e => +e.dataset.u")


def _innermost(unit, space, pos):
    """The field a click on byte ``pos`` must select: the deepest non-derived node holding it."""
    depth = []
    best = None
    for i, r in enumerate(unit["nodes"]):
        depth.append(0 if r["u"] < 0 else depth[r["u"]] + 1)
        if r["s"] == space and r["l"] > 0 and r["p"] <= pos < r["p"] + r["l"]:
            key = (not r.get("x"), depth[i])
            if best is None or key >= best[0]:
                best = (key, i)
    return best[1]


def test_opens_on_the_first_problem_and_jumps_between_problems(browser, pages):
    path, data = pages["damaged"]
    page, errors, requests = _open(browser, path)
    first = next(k for k, u in enumerate(data["units"]) if u["pr"])
    assert _unit(page) == first
    assert page.eval_on_selector(".prob-item.sel", "e => +e.dataset.k") == 0
    crc = data["units"][first]["pr"][0]
    assert crc[1] == "crc_mismatch"
    assert _lit(page, cls="pcur") == [crc[2]]  # the problem's byte
    assert _selected(page)[1] == "crc"  # the innermost field at it
    page.click(".prob-item[data-k='1']")  # bad_length, in the unparsed range
    k = next(k for k, u in enumerate(data["units"]) if u["pr"] and u["pr"][0][1] == "bad_length")
    assert _unit(page) == k
    assert _lit(page, cls="pcur") == [data["units"][k]["pr"][0][2]]
    page.keyboard.press("n")  # the next problem: the zero-filled tail
    assert page.eval_on_selector(".prob-item.sel .pcode", "e => e.textContent") == "zero_fill"
    page.keyboard.press("p")
    assert page.eval_on_selector(".prob-item.sel .pcode", "e => e.textContent") == "bad_length"
    assert errors == [] and all(u.startswith("file://") for u in requests)
    page.close()


def test_a_field_lights_exactly_its_bytes_and_a_byte_selects_its_field(browser, pages):
    path, data = pages["damaged"]
    page, errors, _ = _open(browser, path)
    page.click(".unit[data-u='0']")
    unit = data["units"][0]
    i = next(i for i, r in enumerate(unit["nodes"]) if r["n"] == "batchLength")
    page.click(f".node[data-i='{i}'] .name")
    r = unit["nodes"][i]
    assert _lit(page) == list(range(r["p"], r["p"] + r["l"]))
    assert page.eval_on_selector_all("#pane-0 .as.hl", "cs => cs.map(c => +c.dataset.p)") == _lit(page)
    assert _selected(page) == [i, "batchLength"]
    # a byte inside the first record's value: the value field, not the record or the batch
    v = next(i for i, r in enumerate(unit["nodes"]) if r["n"] == "value" and r["l"] > 4)
    pos = unit["nodes"][v]["p"] + 3
    page.click(f"#pane-0 .hx[data-p='{pos}']")
    assert _selected(page) == [_innermost(unit, 0, pos), "value"]
    assert _lit(page) == list(range(unit["nodes"][v]["p"], unit["nodes"][v]["p"] + unit["nodes"][v]["l"]))
    # a byte of the header: its field
    page.click(f"#pane-0 .as[data-p='{unit['p'] + 1}']")
    assert _selected(page)[1] == "baseOffset"
    # keyboard: down to the next field, j to the next unit
    page.keyboard.press("ArrowDown")
    assert _selected(page)[1] == "batchLength"
    page.keyboard.press("j")
    assert _unit(page) == 1
    assert errors == []
    page.close()


def test_decompressed_bytes_have_their_own_pane_linked_to_the_compressed_ones(browser, pages):
    path, data = pages["gzip"]
    page, errors, _ = _open(browser, path)
    unit = data["units"][0]
    assert _unit(page) == 0 and _selected(page)[0] == 0  # no problem: the first unit, its root
    assert page.eval_on_selector_all(".node", "ns => ns.length") == len(unit["nodes"])  # expanded
    v = next(i for i, r in enumerate(unit["nodes"]) if r["n"] == "value" and r["s"] == 1)
    page.click(f".node[data-i='{v}'] .name")
    r = unit["nodes"][v]
    assert _lit(page, pane=1) == list(range(r["p"], r["p"] + r["l"]))
    container = unit["nodes"][unit["spaces"][1]["node"]]
    assert _lit(page, pane=0, cls="link") == list(range(container["p"], container["p"] + container["l"]))
    assert _lit(page, pane=0) == []
    # a click in the decompressed pane selects the field there
    page.click(f"#pane-1 .hx[data-p='{r['p']}']")
    assert _selected(page) == [_innermost(unit, 1, r["p"]), "value"]
    assert errors == []
    page.close()


def test_search_by_offset_position_and_text(browser, pages):
    path, data = pages["damaged"]
    page, _, _ = _open(browser, path)
    page.fill("#search", "offset 9")
    page.press("#search", "Enter")
    u = data["units"][_unit(page)]
    assert u["bo"] <= 9 <= u["lo"]
    i, name = _selected(page)
    assert name == "offset" and u["nodes"][i]["v"] == "9"
    page.fill("#search", "pos 0x1c0")
    page.press("#search", "Enter")
    u = data["units"][_unit(page)]
    assert u["p"] <= 0x1C0 < u["p"] + u["l"]
    assert _selected(page)[0] == _innermost(u, 0, 0x1C0)
    page.fill("#search", "trace-id")
    page.press("#search", "Enter")
    assert "trace-id" in page.eval_on_selector(".node.sel", "e => e.textContent")
    assert page.eval_on_selector("#search-status", "e => e.textContent").startswith("1 of ")
    page.close()


def test_capture_timeline_and_correlation_id(browser, pages):
    path, data = pages["capture"]
    page, errors, _ = _open(browser, path)
    assert page.eval_on_selector_all(".lane", "ls => ls.length") >= 1
    assert page.eval_on_selector_all(".join", "js => js.length") > 0  # responses joined to requests
    frame = page.locator(".frame.resp").last
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    k = page.evaluate("([x, y]) => +document.elementFromPoint(x, y).dataset.unit", [x, y])  # frames may overlap
    page.mouse.click(x, y)
    assert _unit(page) == k and data["units"][k]["dir"] == "response"
    page.fill("#search", "cid 5")
    page.press("#search", "Enter")
    i, name = _selected(page)
    assert name == "CorrelationId" and data["units"][_unit(page)]["nodes"][i]["v"] == "5"
    assert errors == []
    page.close()


def test_a_script_in_a_record_value_does_not_run(browser, pages):
    path, data = pages["hostile"]
    page, errors, requests = _open(browser, path)
    assert page.evaluate("typeof window.pwned") == "undefined"
    page.fill("#search", "pwned")
    page.press("#search", "Enter")
    for _ in range(6):  # every match is shown as text
        assert "window.pwned=1" in page.eval_on_selector(".node.sel", "e => e.textContent")
        page.press("#search", "Enter")
    texts = page.eval_on_selector_all(".node .val", "vs => vs.map(v => v.textContent)")
    assert any("<script>window.pwned=1</script>" in t for t in texts)
    assert page.evaluate("document.querySelectorAll('script').length") == 2
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert 'onerror="window.pwned=1">.log' in page.eval_on_selector(".input-name", "e => e.textContent")
    assert 'onerror="window.pwned=1">.log' in page.title()
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert errors == [] and all(u.startswith("file://") for u in requests)
    page.close()


def test_a_unit_without_bytes_says_so(browser, pages):
    path, data = pages["partition"]
    page, errors, _ = _open(browser, path)
    k = next(k for k, u in enumerate(data["units"]) if u["t"] == "partition")
    page.click(f".unit[data-u='{k}']")
    assert "no bytes: a directory's report" in page.eval_on_selector("#pane-0", "e => e.textContent")
    assert page.eval_on_selector_all(".input .strip", "ss => ss.length") >= 2  # its segments' strips
    assert errors == []
    page.close()


def test_notes_are_shown_on_their_unit_and_are_not_problems(browser, pages):
    path, data = pages["notes"]
    page, errors, _ = _open(browser, path)
    (note,) = data["units"][0]["nt"]
    code, pos, msg = note
    assert "0 problem(s), 1 note(s)" in page.eval_on_selector(".summary", "e => e.textContent")
    assert page.eval_on_selector_all(".prob-item", "ps => ps.length") == 0
    assert page.eval_on_selector(".problems h2", "e => e.textContent") == "No problems in the units shown"
    assert page.eval_on_selector_all(".unit .pcount", "ps => ps.length") == 0
    assert page.eval_on_selector(".unit[data-u='0'] .ncount", "e => e.textContent").endswith("1")
    assert page.eval_on_selector_all(".strip .st-problem", "bs => bs.length") == 0  # not painted as damage
    # the unit's notes above its fields, and the page's list of notes
    assert _unit(page) == 0
    assert page.eval_on_selector(".tree .unit-notes", "e => e.textContent") == f"note{code}byte 0x{pos:08x}{msg}"
    items = page.eval_on_selector_all("#notes .note-item", "ns => ns.map(n => n.textContent)")
    assert len(items) == 1 and code in items[0] and msg in items[0]
    assert _lit(page, cls="nb") == [pos] and _lit(page, cls="pb") == []  # the note's byte: blue, not red
    page.click(".unit[data-u='0']")
    page.click("#notes .note-item")  # jumps to the unit and outlines the note's byte
    assert _unit(page) == 0 and _lit(page, cls="ncur") == [pos] and _lit(page, cls="pcur") == []
    assert page.eval_on_selector(".unit-note.sel", "e => +e.dataset.k") == 0
    assert _selected(page)[0] == _innermost(data["units"][0], 0, pos)
    page.click(f"#pane-0 .hx[data-p='{pos - 1}']")  # a byte: the note is no longer the one chosen
    assert _lit(page, cls="ncur") == [] and page.eval_on_selector_all(".note-item.sel", "ns => ns.length") == 0
    page.click(".unit-note")  # the note in the tree pane does the same
    assert _lit(page, cls="ncur") == [pos]
    assert errors == []
    page.close()


def test_a_64_kib_unit_draws_its_hex_rows_lazily_and_stays_linked(browser, pages):
    path, data = pages["big"]
    page, errors, _ = _open(browser, path)
    k = next(k for k, u in enumerate(data["units"]) if u.get("more"))
    unit = data["units"][k]
    end = unit["p"] + 65536  # the bytes the page holds of it
    page.click(f".unit[data-u='{k}']")
    rows = page.eval_on_selector_all("#pane-0 .hrow", "rs => rs.length")
    assert 0 < rows < 65536 // 16 // 4  # only the rows near the view are built
    assert "16597 more bytes not in the page" in page.eval_on_selector("#pane-0", "e => e.textContent")
    # a field near the end: exactly its bytes lit (their rows drawn), scrolled into view
    v = max(i for i, r in enumerate(unit["nodes"]) if r["n"] == "value" and r["p"] + r["l"] <= end)
    r = unit["nodes"][v]
    assert r["p"] > unit["p"] + 60000
    page.click(f".node[data-i='{v}'] .name")
    assert _selected(page) == [v, "value"]
    assert _lit(page) == list(range(r["p"], r["p"] + r["l"]))
    assert page.eval_on_selector_all("#pane-0 .as.hl", "cs => cs.map(c => +c.dataset.p)") == _lit(page)
    assert page.evaluate(f"""() => {{
      const c = document.querySelector("#pane-0 .hx[data-p='{r['p']}']").getBoundingClientRect(),
            h = document.getElementById("hex").getBoundingClientRect();
      return c.top >= h.top - 1 && c.bottom <= h.bottom + 1; }}""")  # in view (to a sub-pixel)
    # a byte there selects its field; then the record's length field before it
    page.click(f"#pane-0 .hx[data-p='{r['p'] + 5}']")
    assert _selected(page) == [_innermost(unit, 0, r["p"] + 5), "value"]
    rec = unit["nodes"][r["u"]]
    page.click(f"#pane-0 .as[data-p='{rec['p']}']")
    assert _selected(page)[0] == _innermost(unit, 0, rec["p"])
    # scrolled to the end by hand: the last rows are drawn as they come into view
    page.click(f".unit[data-u='{k}']")
    page.eval_on_selector("#hex", "e => { e.scrollTop = e.scrollHeight; }")
    page.wait_for_selector(f"#pane-0 .hx[data-p='{end - 1}']")
    page.click(f"#pane-0 .hx[data-p='{end - 1}']")
    assert _selected(page)[0] == _innermost(unit, 0, end - 1)
    # search by position and the keyboard: the field there lit
    page.fill("#search", f"pos {r['p'] + 1}")
    page.press("#search", "Enter")
    assert _selected(page) == [_innermost(unit, 0, r["p"] + 1), "value"] and _lit(page)[0] == r["p"]
    page.click(f".node[data-i='{v}'] .name")
    page.keyboard.press("ArrowUp")
    i = _selected(page)[0]
    assert _lit(page) == list(range(unit["nodes"][i]["p"], unit["nodes"][i]["p"] + unit["nodes"][i]["l"]))
    assert errors == []
    page.close()


def test_a_directorys_units_are_grouped_under_their_files(browser, pages):
    path, data = pages["partition"]
    page, errors, _ = _open(browser, path)
    items = page.eval_on_selector_all("#units > *", "es => es.map(e => e.classList.contains('unit-group') ? "
                                      "'g:' + e.textContent : 'u:' + e.dataset.u)")
    want = []
    for k, u in enumerate(data["units"]):
        if k == 0 or data["units"][k - 1]["i"] != u["i"]:
            inp = data["inputs"][u["i"]]
            want.append(f"g:{inp['name']}  ({inp['format']})")
        want.append(f"u:{k}")
    assert items == want and sum(w.startswith("g:") for w in want) >= 5
    assert errors == []
    page.close()


def test_connection_labels_are_not_cut(browser, pages):
    path, data = pages["capture"]
    page, errors, _ = _open(browser, path)
    page.set_viewport_size({"width": 700, "height": 900})
    names = page.eval_on_selector_all(".lane-name", "ns => ns.map(n => [n.textContent, n.scrollWidth <= n.clientWidth,"
                                      " n.getBoundingClientRect().width])")
    lanes = {tuple(u["lane"]) for u in data["units"] if "lane" in u}
    assert sorted(n[0] for n in names) == sorted(f"[{i}] {name}" for i, name in lanes)
    assert all(fits for _, fits, _w in names) and all(w > 0 for *_, w in names)
    assert errors == []
    page.close()


def test_an_empty_selection_and_a_cut_unit_say_so(browser, tmp_path):
    from tests.view_helpers import share_state_batch

    out = tmp_path / "empty.html"
    assert view(SAMPLES / "v2-gzip" / "00000000000000000000.log", "--offsets", "999..", "-o", out).exit_code == 0
    page, errors, _ = _open(browser, out)
    head = page.eval_on_selector("#problems h2", "e => e.textContent")
    assert head.startswith("No unit shown: no unit matched the selection: --offsets 999..; the units read: 4")
    assert page.eval_on_selector("#tree", "e => e.textContent") == head
    assert errors == []
    page.close()
    seg = tmp_path / "in" / "__share_group_state-0" / "00000000000000000000.log"
    seg.parent.mkdir(parents=True)
    seg.write_bytes(share_state_batch(1200))
    out = tmp_path / "cut.html"
    assert view(seg, "--max-page-size", "1M", "-o", out).exit_code == 0
    page, errors, _ = _open(browser, out)
    cut = page_data(out.read_text())["units"][0]["cut"]
    assert page.eval_on_selector("#tree .unit-cut", "e => e.textContent") == (
        f"{cut} more fields not in the page (its size limit; dump shows them)")
    assert errors == []
    page.close()
