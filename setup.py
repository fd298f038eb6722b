"""The optional C extensions (the compiled twins of the hot loops: the magic-2 record reader and its
projections, the legacy message reader, the tree's row formatting): built by ``pip install .`` when a C compiler is there; without
one the install goes on and the pure-Python twins do the work. Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("wireinspect.formats.kafka._recordtable", ["wireinspect/formats/kafka/_recordtable.c"],
                             depends=["wireinspect/codec/jsonout.h"], optional=True, extra_compile_args=["-O2"]),
                   Extension("wireinspect.formats.kafka._legacy", ["wireinspect/formats/kafka/_legacy.c"],
                             depends=["wireinspect/codec/jsonout.h"], optional=True, extra_compile_args=["-O2"]),
                   Extension("wireinspect.render._rowformat", ["wireinspect/render/_rowformat.c"],
                             depends=["wireinspect/codec/jsonout.h"], optional=True, extra_compile_args=["-O2"])])
