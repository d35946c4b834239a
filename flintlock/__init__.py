"""flintlock: Apache Flink's streaming runtime in Python, running on Apache Spark.

Packages and the direction of their imports (DESIGN.md §2; dependencies point downward only):

    datastream  -> graph, common              (the PyFlink-compatible user API)
    cli         -> spark, runtime, common
    spark       -> runtime, graph, common     (the only package that imports pyspark)
    runtime     -> graph, common, usercode
    graph       -> common
    usercode    -> common
    common      -> (standard library only)
"""

__version__ = "0.1.0.dev0"

from flintlock._missing_modules import install as _install_missing_modules

_install_missing_modules()
