"""The house's layering, read from every module's imports (``ast``, nothing imported), counting every
``import`` wherever it stands (at module level, in a function, a class, an ``if``/``try``); an import
under ``if TYPE_CHECKING:`` never runs and is left out. Relative imports are resolved.

The layers, from the ground up (docs/architecture.md "Layers"):

* ``codec/`` imports nothing of wireinspect but ``codec``;
* ``model``, ``layout``, ``errors`` import only ``codec`` and one another;
* ``streams`` (the stream model shared by inputs and stream protocols) only ``codec``, ``model``, ``errors``;
* ``outputs`` and ``cliparams`` import nothing of wireinspect;
* ``render/`` (front ends over the one tree) only ``codec``, ``model``, ``layout``, ``errors``, ``outputs``
  and ``render``: no format, input, op, catalog, command line or Spark;
* ``formats/`` only ``codec``, ``model``, ``layout``, ``errors``, ``streams``, ``inputs/source.py`` and
  ``formats/``: a format knows nothing of inputs, ops, rendering or the catalog that lists it;
* ``inputs/`` and ``ops/`` import no module under ``formats/`` but the generic ones (``base``: what a
  Format is; ``unit``: what a unit is; ``common``: the unparsed and note units every format and
  capture shares; ``options``: what a command asks of the formats): they reach formats through
  ``wireinspect.catalog`` only; neither imports ``spark/`` or ``cli.py``, and ``inputs/`` no ``ops/``;
* ``catalog`` and ``captures`` (the capture formats, which the catalog binds to its stream protocols)
  import no ``ops/``, ``render/``, ``spark/`` or ``cli.py``;
* ``columnar/`` (the Arrow tables, ``sql``) sits above ``ops/``: only ``spark/`` and ``cli.py`` import it;
* ``spark/`` sits above ``columnar/``: only ``cli.py`` imports it; nothing imports ``cli.py`` but ``__main__``;
* no import circle between modules, through any import, at module level or inside a function.

Within ``inputs/`` the capture machinery (``pcap``, ``tcp``, ``capture/``) sits below the catalog (the
catalog's capture formats are built on it) and ``open``/``listing`` above it: the circle check keeps
them apart. ``KNOWN`` lists the layering exceptions still in the code, each with its reason. The record-batch
core (``formats/kafka/records.py``, ``recordtable.py``, ``legacy.py``) imports nothing built on it:
what it calls above it is registered in ``formats/kafka/hooks.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "wireinspect"

CORE = {"wireinspect.model", "wireinspect.layout", "wireinspect.errors"}
GENERIC_FORMATS = {"wireinspect.formats", "wireinspect.formats.base", "wireinspect.formats.unit",
                   "wireinspect.formats.common", "wireinspect.formats.options", "wireinspect.formats.replica"}
LEAVES = {"wireinspect.outputs", "wireinspect.cliparams"}  # import nothing of wireinspect
CATALOG = {"wireinspect.catalog", "wireinspect.captures"}

# (importer, imported): why it is still there.
KNOWN = {
    ("wireinspect.formats.kafka.indexes", "wireinspect.outputs"):
        "Format.rebuild writes the rebuilt .index/.timeindex/.txnindex files beside the recovered log "
        "itself (its contract returns the paths written); outputs.py is a leaf (it imports nothing of "
        "wireinspect) that gives them the same atomic write as recover's copies",
}



def _modules() -> dict:
    """``{module name: path}`` of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path) -> list:
    """``[(imported module, top level?)]`` for the package's own modules that ``name`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_pkg = path.name == "__init__.py"
    out = []

    def target(mod: str, alias: str | None):
        if alias is not None and f"{mod}.{alias}" in MODULES:
            return f"{mod}.{alias}"
        return mod if mod in MODULES else None

    def visit(node, top: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # annotations only: never run
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.split(".")[0] == "wireinspect":
                        t = target(a.name, None)
                        if t:
                            out.append((t, top))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[:len(base) - child.level + 1]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                if mod.split(".")[0] != "wireinspect":
                    continue
                for a in child.names:
                    t = target(mod, a.name)
                    if t:
                        out.append((t, top))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False)
            else:
                visit(child, top)  # class bodies, if/try at module level run at import time

    visit(tree, True)
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _under(mod: str, *prefixes: str) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def _allowed(importer: str, imported: str) -> str | None:
    """None when ``importer`` may import ``imported``, else the rule it breaks."""
    if importer == imported:
        return None
    if imported == "wireinspect.cli" and importer != "wireinspect.__main__":
        return "nothing imports cli.py (the top of the house) but __main__"
    if _under(imported, "wireinspect.spark") and not _under(importer, "wireinspect.spark", "wireinspect.cli"):
        return "only cli.py imports spark/ (it sits above ops/)"
    if _under(imported, "wireinspect.columnar") and not _under(importer, "wireinspect.columnar", "wireinspect.spark",
                                                                  "wireinspect.cli"):
        return "only spark/ and cli.py import columnar/ (it sits above ops/, below spark/)"
    if _under(importer, "wireinspect.codec"):
        return None if _under(imported, "wireinspect.codec") else "codec imports only codec"
    if importer in CORE:
        return None if _under(imported, "wireinspect.codec") or imported in CORE else \
            "model/layout/errors import only codec and one another"
    if importer == "wireinspect.streams":
        return None if _under(imported, "wireinspect.codec", "wireinspect.model", "wireinspect.errors") else \
            "streams imports only codec, model and errors"
    if importer in LEAVES:
        return "outputs.py and cliparams.py import nothing of wireinspect"
    if _under(importer, "wireinspect.render"):
        ok = _under(imported, "wireinspect.codec", "wireinspect.render") or imported in CORE or imported in LEAVES
        return None if ok else "render imports only codec, model, layout, errors, outputs and render"
    if _under(importer, "wireinspect.formats"):
        ok = _under(imported, "wireinspect.codec", "wireinspect.formats", "wireinspect.streams") or \
            imported in CORE or imported == "wireinspect.inputs.source"
        return None if ok else "formats import only codec, model, layout, errors, streams, inputs/source.py, formats"
    if _under(importer, "wireinspect.inputs", "wireinspect.ops"):
        if _under(imported, "wireinspect.formats") and imported not in GENERIC_FORMATS:
            return "inputs/ and ops/ reach formats through the catalog only (formats/base, unit, common, options allowed)"
        if _under(importer, "wireinspect.inputs") and _under(imported, "wireinspect.ops"):
            return "inputs/ sit below ops/"
        if _under(importer, "wireinspect.inputs") and _under(imported, "wireinspect.render"):
            return "inputs/ know nothing of rendering"
    if importer in CATALOG:
        if _under(imported, "wireinspect.ops", "wireinspect.render"):
            return "the catalog sits below ops/ and render"
    return None


def _violations() -> list:
    out = []
    for importer, imports in IMPORTS.items():
        for imported, _ in imports:
            why = _allowed(importer, imported)
            if why is not None:
                out.append((importer, imported, why))
    return sorted(set(out))


def test_every_module_parsed():
    assert "wireinspect.streams" in MODULES and "wireinspect.catalog" in MODULES
    assert "wireinspect.codec.bytesfmt" in MODULES and "wireinspect.render.bytesfmt" not in MODULES
    assert "wireinspect.formats.registry" not in MODULES  # the catalog lists formats and inputs
    assert ("wireinspect.streams", True) in IMPORTS["wireinspect.inputs.tcp"]


def test_layering():
    found = [(a, b, why) for a, b, why in _violations() if (a, b) not in KNOWN]
    assert found == [], "\n".join(f"{a} -> {b}: {why}" for a, b, why in found)


BATCH_CORE = ("wireinspect.formats.kafka.records", "wireinspect.formats.kafka.recordtable",
              "wireinspect.formats.kafka.recordtree", "wireinspect.formats.kafka.legacy")
CORE_MAY_IMPORT = {"wireinspect.formats.kafka.control", "wireinspect.formats.kafka.fields",
                   "wireinspect.formats.kafka.hooks", "wireinspect.formats.kafka.recordtable",
                   "wireinspect.formats.kafka.recordtree",
                   "wireinspect.formats.kafka.records"}


def test_record_batch_core_imports_nothing_built_on_it():
    """Internal-topic decoding, Schema Registry labels, encode and the JSON projections plug into the
    batch from above (``formats/kafka/hooks.py``): the core imports no other Kafka module."""
    for m in BATCH_CORE:
        above = sorted(t for t, _ in IMPORTS[m] if t.startswith("wireinspect.formats.kafka.")
                       and t not in CORE_MAY_IMPORT)
        assert above == [], (m, above)


def test_known_exceptions_are_still_there():
    # an exception that no longer exists must leave KNOWN (the list says what the code still does)
    present = {(a, b) for a, b, _ in _violations()}
    assert set(KNOWN) <= present, set(KNOWN) - present


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (or a module importing itself)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_circle_at_import_time():
    graph = {m: sorted({t for t, top in imps if top and t != m}) for m, imps in IMPORTS.items()}
    assert _cycles(graph) == []


def _circles_text(cycles: list, graph: dict) -> str:
    lines = []
    for comp in cycles:
        members = set(comp)
        lines.append(f"{len(comp)} modules:")
        lines += [f"  {a} -> {b}" for a in comp for b in graph[a] if b in members]
    return "\n".join(lines)


def test_no_import_circle():
    """No circle through any import, inside functions too (a lazy import buys start-up time, not a
    way around the layering)."""
    graph = {m: sorted({t for t, _ in imps if t != m}) for m, imps in IMPORTS.items()}
    cycles = _cycles(graph)
    assert cycles == [], _circles_text(cycles, graph)


def test_imports_inside_functions_are_counted():
    # a lazy import is an edge like any other (the descriptor modules import their readers in their hooks)
    assert ("wireinspect.formats.kafka.logcheck", False) in IMPORTS["wireinspect.formats.kafka.logformat"]
    assert ("wireinspect.formats.redpanda.segment", False) in IMPORTS["wireinspect.formats.redpanda.format"]


def test_cycle_finder_finds_a_circle():
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _cycles({"a": ["b"], "b": []}) == []


@pytest.mark.parametrize("importer, imported, ok", [
    ("wireinspect.formats.kafka.records", "wireinspect.inputs.capture.follow", False),
    ("wireinspect.formats.kafka.records", "wireinspect.catalog", False),
    ("wireinspect.formats.kafka.records", "wireinspect.streams", True),
    ("wireinspect.formats.kafka.records", "wireinspect.inputs.source", True),
    ("wireinspect.inputs.capture.connections", "wireinspect.formats.kafka.protocol.stream", False),
    ("wireinspect.inputs.capture.connections", "wireinspect.formats.common", True),
    ("wireinspect.ops.encode", "wireinspect.catalog", True),
    ("wireinspect.codec.crc", "wireinspect.model", False),
    ("wireinspect.layout", "wireinspect.codec.bytesfmt", True),
    ("wireinspect.layout", "wireinspect.render.safe", False),
    ("wireinspect.streams", "wireinspect.inputs.tcp", False),
    ("wireinspect.ops.dump", "wireinspect.cli", False),
    ("wireinspect.__main__", "wireinspect.cli", True),
    ("wireinspect.ops.dump", "wireinspect.spark.job", False),
    ("wireinspect.cli", "wireinspect.spark.scan", True),
    ("wireinspect.spark.job", "wireinspect.ops.dump", True),
    ("wireinspect.inputs.capture.connections", "wireinspect.ops.options", False),
    ("wireinspect.inputs.capture.connections", "wireinspect.formats.options", True),
    ("wireinspect.inputs.open", "wireinspect.catalog", True),
    ("wireinspect.catalog", "wireinspect.inputs.capture.connections", True),
    ("wireinspect.catalog", "wireinspect.ops.options", False),
    ("wireinspect.render.tree", "wireinspect.ops.dump", False),
    ("wireinspect.render.tree", "wireinspect.model", True),
    ("wireinspect.outputs", "wireinspect.errors", False),
])
def test_rules(importer, imported, ok):
    assert (_allowed(importer, imported) is None) == ok
