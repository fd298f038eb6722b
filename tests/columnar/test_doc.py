"""docs/columnar.md holds the schema of every table exactly as wireinspect/columnar/tables.py declares it."""

from tests.paths import ROOT
from wireinspect.columnar.doc import BEGIN, END, schema_markdown


def test_docs_schema_is_the_declared_one():
    page = (ROOT / "docs" / "columnar.md").read_text()
    start, end = page.index(BEGIN), page.index(END) + len(END)
    assert page[start:end] == schema_markdown(), "run: python -m wireinspect.columnar.doc (docs/columnar.md's schema)"
