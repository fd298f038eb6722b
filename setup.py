"""The optional C extension (the compiled twin of the dump --json fast path): built by ``pip install .``
when a C compiler is there; without one the install goes on and the pure-Python path does the work.
Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("wireinspect.formats.kafka._fastjson", ["wireinspect/formats/kafka/_fastjson.c"],
                             optional=True, extra_compile_args=["-O2"])])
