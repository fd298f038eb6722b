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
MAX_PAGE_SIZE = 16 << 20  # bytes of one page by default (view --max-page-size): past it, no unit more is added
NOT_READ_LISTED = 1000  # files a page lists as skipped or unreadable (the rest are counted)
UNIT_TREE_CHARS = 2 << 20  # characters of one unit's field rows and decompressed bytes: past it, rows are cut
UNIT_PROBLEMS = 1000  # problems of one unit listed in the page (all are counted)
STRIP_RESERVE = 2001 * 100 + 200  # characters an input's strip may take (render ops/view.Strip: 2,001 bands at most)
INPUT_RESERVE = STRIP_RESERVE + (8 << 10)  # an input's strip, name and left-out lines
_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def script_json(obj) -> str:
    """``obj`` as JSON text safe inside a ``<script>`` element: ASCII only, ``<``, ``>`` and ``&``
    escaped (``</script>`` and ``<!--`` cannot occur), U+2028/2029 escaped."""
    return _escape_markup(json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=str))


def _escape_markup(text: str) -> str:
    """``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026`` (:data:`_ESCAPES`; replace is faster
    than translate)."""
    for c, e in _ESCAPES.items():
        text = text.replace(chr(c), e)
    return text


try:
    from orjson import dumps as _orjson_dumps
except ImportError:  # pragma: no cover - orjson is a dependency
    _orjson_dumps = None


def row_json(row: list) -> str:
    """:func:`script_json` of a packed node row (ints, strings, None and lists of them), faster: by
    orjson when its text is the same (ASCII, no DEL: json escapes those, orjson leaves them)."""
    if _orjson_dumps is not None:
        try:
            text = _orjson_dumps(row).decode()
        except TypeError:  # an int beyond 64 bits
            text = None
        if text is not None and text.isascii() and "\x7f" not in text:
            return _escape_markup(text) if "<" in text or ">" in text or "&" in text else text
    return script_json(row)


def value_text(node: Node) -> tuple[str | None, str | None]:
    """``(value, display)`` texts of a node as the page shows them: as the terminal's tree
    (``render/tree.py``), a leaf without a value reads ``null``, and a display that only restates
    the value (``compression`` ``'none'``, display ``none (bits 0-2)``) is shown alone, in the
    value's place; bytes values are longer than the terminal's (:data:`VALUE_CHARS`)."""
    v, d = node.value, node.display
    d = safe_text(d) if d else None
    if v is None:
        if node.is_leaf:
            return (d or "null"), None
        return None, d
    if d is not None and isinstance(v, (str, int, float)) and (d == str(v) or d.startswith(f"{v} ")):
        return d, None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return show_text_or_bytes(bytes(v), VALUE_CHARS), d
    return show_node_value(node.name, v), d


def project(node: Node, data: bytes | None, first: int, limit: int = 64 << 10,
            max_chars: int | None = None) -> dict:
    """One unit's tree and bytes for the page: ``{"nodes": [...], "spaces": [...], "rows": [...],
    "chars": n, "cut": n}``.

    ``nodes`` in preorder, each ``{"u": parent index (-1 for the root), "n": name, "p": position,
    "l": length, "s": the space its position counts in}`` plus, when present, ``"v"`` (value text),
    ``"d"`` (display text), ``"x": 1`` (derived), ``"o"`` (a decompressed container: the space its
    children count in) and ``"pr": [[code, position, message], ...]`` (at most
    :data:`UNIT_PROBLEMS`); ``rows``: each node as the page's JSON text (:func:`packed`).

    ``spaces[0]`` is the unit's bytes (``data`` from position ``first``; ``None``: not at hand);
    each decompressed container adds a space ``{"node", "parent", "start": 0, "length", "b"}``:
    its first ``limit`` decompressed bytes in base64 (``None`` when the decoder did not keep them).

    ``max_chars``: past this many characters of rows and decompressed bytes, no node more is
    projected (the root always is); ``cut`` counts the nodes left out, ``chars`` the characters
    taken. The nodes left out are not visited beyond counting them."""
    spaces = [{"node": -1, "parent": -1, "start": first, "length": node.length,
               "b": None if data is None else base64.b64encode(data).decode("ascii")}]
    rows: list = []
    texts: list = []
    chars = 0
    cut = 0
    stack = [(node, -1, 0)]
    while stack:
        n, parent, space = stack.pop()
        if max_chars is not None and rows and chars >= max_chars:
            cut += sum(1 for _ in n.walk())
            continue
        i = len(rows)
        name = n.name
        r = {"u": parent, "n": name if name.isascii() and name.isprintable() else safe_text(name), "p": n.position,
             "l": n.length, "s": space}
        v, d = value_text(n)
        # the row as packed() writes it: NODE_KEYS' values, trailing None left out
        row = [parent, r["n"], n.position, n.length, space, v, d, None, None, None]
        if v is not None:
            r["v"] = v
        if d is not None:
            r["d"] = d
        if n.derived:
            r["x"] = row[7] = 1
        if n.problems:
            r["pr"] = row[9] = [[p.code, p.position, safe_text(p.message)] for p in n.problems[:UNIT_PROBLEMS]]
        inner = space
        if n.space == "decompressed":
            inner = len(spaces)
            raw = bytes(n.data) if n.data is not None else None
            sp = {"node": i, "parent": space, "start": 0, "length": len(raw) if raw is not None else 0,
                  "b": None if raw is None else base64.b64encode(raw[:limit]).decode("ascii"),
                  "name": safe_text(n.display or n.name)}
            spaces.append(sp)
            chars += len(sp["b"] or "") + 100
            r["o"] = row[8] = inner
        while row[-1] is None:
            row.pop()
        rows.append(r)
        text = row_json(row)
        texts.append(text)
        chars += len(text) + 1
        kids = n.children
        if kids:
            stack.extend((c, i, inner) for c in reversed(kids))
    return {"nodes": rows, "spaces": spaces, "rows": texts, "chars": chars, "cut": cut}


NODE_KEYS = ("u", "n", "p", "l", "s", "v", "d", "x", "o", "pr")
"""The page holds each row of :func:`project` as an array of these keys' values (absent ones
``null``, trailing ones left out): a third smaller than objects; the script unpacks them."""


def packed(row: dict) -> list:
    get = row.get
    out = [get(k) for k in NODE_KEYS]
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

    ``budget``: bytes the whole page may take (the script, the styles, every input and unit);
    ``size`` counts them as they are added, each input's strip reserved (:data:`INPUT_RESERVE`)
    until it is set. ``full``: no unit more fits."""

    def __init__(self, given: list, max_units: int, budget: int = MAX_PAGE_SIZE):
        self.given, self.max_units, self.budget = given, max_units, budget
        self.inputs: list = []
        self.units: list = []
        self.full = False
        self.cut_units = 0  # units whose fields or problems were cut (add_unit)
        self.not_read: list = []  # files of a walk that were skipped or could not be read (not_read_add)
        self.not_read_more = 0
        self.replicas: list | None = None  # replicas --view: partitions' copies as strips (ops/replview.py)
        self.size = len(self.render().encode("utf-8")) + 16  # the page without inputs nor units

    @property
    def unit_count(self) -> int:
        return len(self.units)

    @property
    def room(self) -> int:
        """Bytes still free in the page."""
        return self.budget - self.size

    def not_read_add(self, kind: str, name: str, why: str) -> None:
        """Say on the page that ``name`` was not read: ``kind`` ``"skipped"`` (not a format wireinspect
        reads) or ``"unreadable"`` (could not be read), with why; past :data:`NOT_READ_LISTED` entries only
        counted (the page stays bounded)."""
        if len(self.not_read) >= NOT_READ_LISTED:
            self.not_read_more += 1
            return
        entry = {"kind": kind, "name": safe_text(name), "why": safe_text(why)}
        self.not_read.append(entry)
        self.size += len(script_json(entry)) + 1

    def add_input(self, name: str, fmt: str, size: int) -> int | None:
        """The index of a new input, or None (the page is full) when its strip and name do not fit."""
        if self.room < INPUT_RESERVE:
            self.full = True
            return None
        entry = {"name": safe_text(name), "format": fmt, "size": size, "strip": None, "leftOut": []}
        self.inputs.append(entry)
        self.size += len(script_json(entry)) + 1 + len(_html.escape(entry["name"]).encode("utf-8")) + 2
        self.size += STRIP_RESERVE
        return len(self.inputs) - 1

    def set_strip(self, index: int, strip: dict | None) -> None:
        """Set an input's strip (once), in place of the room reserved for it."""
        self.inputs[index]["strip"] = strip
        self.size += len(script_json(strip)) - len("null") - STRIP_RESERVE

    def left_out(self, index: int, text: str) -> None:
        self.inputs[index]["leftOut"].append(text)
        self.size += len(script_json(text)) + 1

    def add_unit(self, index: int, unit, node: Node, data: bytes | None, first: int, state: str,
                 lane=None, why: str = "", limit: int = 64 << 10) -> bool:
        """``unit`` (the unit protocol's members), its tree ``node``, its bytes ``data`` from position
        ``first`` (None: not at hand, ``why``), its strip ``state``; ``lane``: a capture's
        ``(connection index, name)``.

        Its field rows are cut at :data:`UNIT_TREE_CHARS` or the room left, saying how many fields
        were left out (``"cut"``); at most :data:`UNIT_PROBLEMS` problems are listed (``"prMore"``:
        how many more). Returns False, adding nothing and making the page :attr:`full`, when even
        the unit without its fields past the root does not fit."""
        base = 4096 + (len(data) * 4 // 3 + 4 if data is not None else 0)
        room = self.room - base
        if room <= 0:
            self.full = True
            return False
        d = project(node, data, first, limit, max_chars=min(UNIT_TREE_CHARS, room))
        in_tree = [p for n in node.walk() for p in n.problems]
        seen = {(p.code, p.position, p.message) for p in in_tree}
        loose = [p for p in unit.problems if (p.code, p.position, p.message) not in seen]
        if loose:  # problems the tree does not place: on its root
            root = d["nodes"][0]
            rows = root.get("pr", []) + [[p.code, p.position, safe_text(p.message)] for p in loose]
            root["pr"] = rows[:UNIT_PROBLEMS]
            d["rows"][0] = script_json(packed(root))
        problems = [[k, code, pos, msg] for k, r in enumerate(d["nodes"]) for code, pos, msg in r.get("pr", ())]
        del problems[UNIT_PROBLEMS:]
        more = len(in_tree) + len(loose) - len(problems)
        u = {"i": index, "t": unit.type, "p": unit.position, "l": unit.length, "label": unit_label(node),
             "st": state, "pr": problems, "nodes": [], "spaces": d["spaces"]}
        if d["cut"]:
            u["cut"] = d["cut"]
        if more > 0:
            u["prMore"] = more
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
        notes = [note_row(p) for p in unit.notes[:UNIT_PROBLEMS]]
        if notes:
            u["nt"] = notes
        head, tail = script_json(u).split('"nodes":[]', 1)
        text = head + '"nodes":[' + ",".join(d["rows"]) + "]" + tail
        if len(text) + 1 > self.room:
            self.full = True
            return False
        self.size += len(text) + 1
        self.units.append(text)
        self.cut_units += bool(d["cut"] or more > 0)
        return True

    def render(self) -> str:
        """The whole page (text)."""
        js = _asset("view.js")
        css = _asset("view.css")
        if self.replicas is not None:  # replicas --view: its strips, after view's frame
            js += _asset("replicas.js")
            css += _asset("replicas.css")
        digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
        head = script_json({"inputs": self.inputs, "given": self.given, "maxUnits": self.max_units,
                            "notRead": self.not_read, "notReadMore": self.not_read_more,
                            **({"replicas": self.replicas} if self.replicas is not None else {})})
        data = head[:-1] + ',"units":[' + ",".join(self.units) + "]}"
        names = [i["name"] for i in self.inputs] + [p["partition"] for p in self.replicas or ()]
        names = ", ".join(names) or "no input"
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
