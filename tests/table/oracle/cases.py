"""Reads an oracle fixture: the captured stdout of a program in this directory, split into
cases at its ``=== CASE name`` markers (``=== END`` closes the last one).

Used by the unit tests under tests/table/; the programs themselves run only on real PyFlink.
"""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def load_cases(fixture: str) -> dict[str, str]:
    """Case name -> its text (lines joined with newlines, a trailing newline per line)."""
    cases: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    for line in text.splitlines(keepends=True):
        if line.startswith("=== CASE ") or line.startswith("=== END"):
            if name is not None:
                cases[name] = "".join(lines)
            name = line[len("=== CASE "):].rstrip("\n") if line.startswith("=== CASE ") else None
            lines = []
        elif name is not None:
            lines.append(line)
    if not cases:
        raise ValueError(f"{fixture} holds no cases")
    return cases
