"""Shared by the oracle programs: a case marker the fixture parser splits on.

Run on real PyFlink only (see README in this directory); never imported by a test.
"""

import sys


def case(name):
    """Starts a new case: everything written to stdout up to the next marker belongs to it."""
    sys.stdout.flush()
    print(f"=== CASE {name}", flush=True)


def end():
    sys.stdout.flush()
    print("=== END", flush=True)
