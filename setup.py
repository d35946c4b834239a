"""The optional C accelerators (flintlock/common/_speedups.c, and the Table layer's rows in
flintlock/common/_crows.c); everything else is in pyproject.toml. ``optional=True``: where no C
compiler is found, flintlock installs without them and runs the same code paths in Python
(docs/decisions.md, "An optional C accelerator")."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("flintlock.common._speedups", ["flintlock/common/_speedups.c"],
                             optional=True, extra_compile_args=["-O2"]),
                   Extension("flintlock.common._crows",
                             ["flintlock/common/_crows.c"],
                             optional=True, extra_compile_args=["-O2"]),
                   Extension("flintlock.common._cformats",
                             ["flintlock/common/_cformats.c"],
                             optional=True, extra_compile_args=["-O2"]),
                   Extension("flintlock.runtime.state._crocks",
                             ["flintlock/runtime/state/_crocks.c"],
                             optional=True, extra_compile_args=["-O2"])])
