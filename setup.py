"""The optional C accelerator (flintlock/common/_speedups.c); everything else is in
pyproject.toml. ``optional=True``: where no C compiler is found, flintlock installs without it
and runs the same code paths in Python (docs/decisions.md, "An optional C accelerator")."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("flintlock.common._speedups", ["flintlock/common/_speedups.c"],
                             optional=True, extra_compile_args=["-O2"])])
