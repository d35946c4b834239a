"""The Table layer's output formats that users compare by eye, one module each, pure
functions tested against PyFlink's real output (tests/table/oracle/):

* ``tableau`` — ``TableResult.print()`` (streaming and batch layouts, ``OK``, ``Empty set``);
* ``java_values`` — a SQL value's text in the tableau and in the print connector;
* ``java_hash`` — a Java ``HashMap``'s iteration order (print connector maps);
* ``print_connector`` — the print connector's line with its ``N> `` prefix;
* ``describe`` — DESCRIBE's rows and table.

May import ``flintlock.common`` and ``flintlock.table``'s ``types``, ``schema`` and
``resolved_schema``; nothing here does I/O.
"""

from flintlock.table.formatting.print_connector import print_connector_line

__all__ = ["print_connector_line"]
