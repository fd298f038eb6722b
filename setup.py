"""The optional C extensions (the compiled twins of the dump --json fast path and of the spark scan
columns' byte path): built by ``pip install .`` when a C compiler is there; without one the install
goes on and the pure-Python paths do the work. Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("wireinspect.formats.kafka._fastjson", ["wireinspect/formats/kafka/_fastjson.c"],
                             depends=["wireinspect/codec/varint.h"], optional=True, extra_compile_args=["-O2"]),
                   Extension("wireinspect.formats.kafka._legacy", ["wireinspect/formats/kafka/_legacy.c"],
                             depends=["wireinspect/codec/jsonout.h"], optional=True, extra_compile_args=["-O2"]),
                   Extension("wireinspect.formats.kafka._split", ["wireinspect/formats/kafka/_split.c"],
                             depends=["wireinspect/codec/varint.h"], optional=True, extra_compile_args=["-O2"])])
