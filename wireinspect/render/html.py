"""``view``: units and their field trees as one self-contained HTML page (no network, no CDN).

One projection more of the same :class:`~wireinspect.model.Node` tree ``dump`` prints: each unit's
tree is flattened in preorder into rows (name, position, length, value and display text, derived,
problems, the *space* its positions count in), its bytes go along in base64, its notes (findings
that are not damage) beside its problems, and the page's script (``view.js``, ``view.css`` beside
this module) draws the unit list, the tree, the hex panes, the problems and notes and the overview
strip from them. Nothing here knows a format.

Escaping: the data travel as JSON inside ``<script type="application/json">`` with ``<``, ``>``,
``&`` and every non-ASCII character (U+2028/2029 too) written as ``\\uXXXX``, so no value can end
the element; the script builds the DOM with ``textContent`` only; and the page's Content Security
Policy allows no network access and no script but its own (by hash).
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import json
import math
from importlib import resources

from wireinspect.model import Node
from wireinspect.render.safe import safe_text, show_node_value, show_text_or_bytes

VALUE_CHARS = 200  # characters of a bytes value's text in the page (search reads them too)
MAX_PAGE_DATA = 48 << 20  # characters of unit data in one page: past it, no unit more is added
_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def script_json(obj) -> str:
    """``obj`` as JSON text safe inside a ``<script>`` element: ASCII only, ``<``, ``>`` and ``&``
    escaped (``</script>`` and ``<!--`` cannot occur), U+2028/2029 escaped."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=str).translate(_ESCAPES)


def value_text(node: Node) -> str | None:
    """The value as the tree shows it (bytes: escaped text, longer than the terminal's), or None."""
    v = node.value
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return show_text_or_bytes(bytes(v), VALUE_CHARS)
    return show_node_value(node.name, v)


def project(node: Node, data: bytes | None, first: int, limit: int = 64 << 10) -> dict:
    """One unit's tree and bytes for the page: ``{"nodes": [...], "spaces": [...]}``.

    ``nodes`` in preorder, each ``{"u": parent index (-1 for the root), "n": name, "p": position,
    "l": length, "s": the space its position counts in}`` plus, when present, ``"v"`` (value text),
    ``"d"`` (display text), ``"x": 1`` (derived), ``"o"`` (a decompressed container: the space its
    children count in) and ``"pr": [[code, position, message], ...]``.

    ``spaces[0]`` is the unit's bytes (``data`` from position ``first``; ``None``: not at hand);
    each decompressed container adds a space ``{"node", "parent", "start": 0, "length", "b"}``:
    its first ``limit`` decompressed bytes in base64 (``None`` when the decoder did not keep them)."""
    spaces = [{"node": -1, "parent": -1, "start": first, "length": node.length,
               "b": None if data is None else base64.b64encode(data).decode("ascii")}]
    rows: list = []
    stack = [(node, -1, 0)]
    while stack:
        n, parent, space = stack.pop()
        i = len(rows)
        r = {"u": parent, "n": safe_text(n.name), "p": n.position, "l": n.length, "s": space}
        v = value_text(n)
        if v is not None:
            r["v"] = v
        if n.display:
            r["d"] = safe_text(n.display)
        if n.derived:
            r["x"] = 1
        if n.problems:
            r["pr"] = [[p.code, p.position, safe_text(p.message)] for p in n.problems]
        inner = space
        if n.space == "decompressed":
            inner = len(spaces)
            raw = bytes(n.data) if n.data is not None else None
            spaces.append({"node": i, "parent": space, "start": 0, "length": len(raw) if raw is not None else 0,
                           "b": None if raw is None else base64.b64encode(raw[:limit]).decode("ascii"),
                           "name": safe_text(n.display or n.name)})
            r["o"] = inner
        rows.append(r)
        stack.extend((c, i, inner) for c in reversed(n.children))
    return {"nodes": rows, "spaces": spaces}


NODE_KEYS = ("u", "n", "p", "l", "s", "v", "d", "x", "o", "pr")
"""The page holds each row of :func:`project` as an array of these keys' values (absent ones
``null``, trailing ones left out): a third smaller than objects; the script unpacks them."""


def packed(row: dict) -> list:
    out = [row.get(k) for k in NODE_KEYS]
    while out[-1] is None:
        out.pop()
    return out


def note_row(p) -> list:
    """A unit's note (a finding that is not damage) for the page: ``[code, position, message]``,
    plus the file it is about when it is a directory's (``FileProblem.file``)."""
    row = [p.code, p.position, safe_text(p.message)]
    where = getattr(p, "file", "")
    if where:
        row.append(safe_text(where))
    return row


def unit_label(node: Node) -> str:
    """The unit's line in the list: its type and its tree line's text (as ``dump --summary``)."""
    text = safe_text(node.display) if node.display else ""
    return f"{safe_text(node.name)}  {text}".strip()


class Page:
    """The page being built: inputs, units (kept as their JSON text), strips, what was left out.
    ``full``: the units hold :data:`MAX_PAGE_DATA` characters (``budget``) or more."""

    def __init__(self, given: list, max_units: int, budget: int = MAX_PAGE_DATA):
        self.given, self.max_units, self.budget = given, max_units, budget
        self.inputs: list = []
        self.units: list = []
        self.size = 0

    @property
    def unit_count(self) -> int:
        return len(self.units)

    @property
    def full(self) -> bool:
        return self.size >= self.budget

    def add_input(self, name: str, fmt: str, size: int) -> int:
        self.inputs.append({"name": safe_text(name), "format": fmt, "size": size, "strip": None, "leftOut": []})
        return len(self.inputs) - 1

    def set_strip(self, index: int, strip: dict | None) -> None:
        self.inputs[index]["strip"] = strip

    def left_out(self, index: int, text: str) -> None:
        self.inputs[index]["leftOut"].append(text)

    def add_unit(self, index: int, unit, node: Node, data: bytes | None, first: int, state: str,
                 lane=None, why: str = "", limit: int = 64 << 10) -> None:
        """``unit`` (the unit protocol's members), its tree ``node``, its bytes ``data`` from position
        ``first`` (None: not at hand, ``why``), its strip ``state``; ``lane``: a capture's
        ``(connection index, name)``."""
        d = project(node, data, first, limit)
        problems = []
        for k, r in enumerate(d["nodes"]):
            for code, pos, msg in r.get("pr", ()):
                problems.append([k, code, pos, msg])
        if not problems and unit.problems:  # problems the tree does not place: on its root
            d["nodes"][0]["pr"] = [[p.code, p.position, safe_text(p.message)] for p in unit.problems]
            problems = [[0, p.code, p.position, safe_text(p.message)] for p in unit.problems]
        u = {"i": index, "t": unit.type, "p": unit.position, "l": unit.length, "label": unit_label(node),
             "st": state, "pr": problems, "nodes": [packed(r) for r in d["nodes"]], "spaces": d["spaces"]}
        if data is not None and len(data) < max(node.length, 0):
            u["more"] = node.length - len(data)
        if data is None:
            u["why"] = why
        for key, v in (("bo", unit.base_offset), ("lo", unit.last_offset), ("fp", unit.file_position),
                       ("ts", unit.timestamp), ("lat", unit.latency_ms), ("dir", unit.direction),
                       ("tmin", unit.base_timestamp), ("tmax", unit.max_timestamp)):
            if v is not None and (not isinstance(v, float) or math.isfinite(v)):  # JSON has no NaN
                u[key] = v
        if lane is not None:
            u["lane"] = list(lane)
        notes = [note_row(p) for p in unit.notes]
        if notes:
            u["nt"] = notes
        text = script_json(u)
        self.size += len(text)
        self.units.append(text)

    def render(self) -> str:
        """The whole page (text)."""
        js = _asset("view.js")
        css = _asset("view.css")
        digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
        head = script_json({"inputs": self.inputs, "given": self.given, "maxUnits": self.max_units})
        data = head[:-1] + ',"units":[' + ",".join(self.units) + "]}"
        names = ", ".join(i["name"] for i in self.inputs) or "no input"
        csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
               "connect-src 'none'; form-action 'none'; base-uri 'none'")
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
                f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>wireinspect view: {_html.escape(names)}</title>\n<style>{css}</style>\n</head>\n"
                f'<body>\n<noscript>This page needs JavaScript (inline only, no network).</noscript>\n'
                f'<script type="application/json" id="wi-data">{data}</script>\n'
                f"<script>{js}</script>\n</body></html>\n")


def _asset(name: str) -> str:
    return resources.files("wireinspect.render").joinpath(name).read_text(encoding="utf-8")
