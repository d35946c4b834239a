"""Regenerates ``tests/parity/expected/`` by running every parity program on real PyFlink.

Each program under ``tests/parity/programs/`` runs, unchanged, as ``python program.py`` with
the Python of a virtualenv that has ``apache-flink`` installed (PyFlink's local mini-cluster,
Java 11+ on the PATH); its stdout becomes ``expected/<program>.txt`` and the PyFlink version
goes to ``expected/pyflink-version.txt``. The virtualenv's ``bin`` is put first on the PATH,
because PyFlink starts its Python workers with the ``python`` it finds there, and Python's
output is unbuffered, so the program's own lines and the print sink's lines (written by the
JVM to the same stdout) appear in the order they were written.

Usage (from the repository root)::

    python -m venv /tmp/pyflink-venv && /tmp/pyflink-venv/bin/pip install apache-flink
    .venv/bin/python tests/parity/generate_expected.py --python /tmp/pyflink-venv/bin/python \
        [program ...]

Not a test and never imported by one: it needs PyFlink and takes about half a minute per
program.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PARITY_DIR = Path(__file__).resolve().parent
PROGRAMS_DIR = PARITY_DIR / "programs"
EXPECTED_DIR = PARITY_DIR / "expected"
TIMEOUT_S = 900


class PyFlinkRunFailedError(Exception):
    def __init__(self, program: str, returncode: int, stderr_tail: str) -> None:
        super().__init__(program, returncode, stderr_tail)
        self.program = program
        self.returncode = returncode
        self.stderr_tail = stderr_tail

    def __str__(self) -> str:
        return (f"{self.program} exited with {self.returncode} on PyFlink:\n"
                f"{self.stderr_tail}")


def pyflink_env(python: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def pyflink_version(python: Path) -> str:
    result = subprocess.run(
        [str(python), "-c", "import pyflink.version; print(pyflink.version.__version__)"],
        capture_output=True, text=True, check=True, env=pyflink_env(python), timeout=120)
    return result.stdout.strip()


def run_program(python: Path, program: Path) -> str:
    with tempfile.TemporaryDirectory(prefix="parity-") as workdir:
        result = subprocess.run(
            [str(python), str(program)], capture_output=True, text=True, cwd=workdir,
            env=pyflink_env(python), timeout=TIMEOUT_S)
    if result.returncode != 0:
        raise PyFlinkRunFailedError(program.stem, result.returncode, result.stderr[-4000:])
    return result.stdout


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, required=True,
                        help="python of a virtualenv with apache-flink installed")
    parser.add_argument("programs", nargs="*", help="program names (default: all)")
    args = parser.parse_args(argv)
    names = args.programs or sorted(path.stem for path in PROGRAMS_DIR.glob("*.py"))
    EXPECTED_DIR.mkdir(exist_ok=True)
    version = pyflink_version(args.python)
    (EXPECTED_DIR / "pyflink-version.txt").write_text(version + "\n", encoding="utf-8")
    failed = []
    for name in names:
        try:
            output = run_program(args.python, PROGRAMS_DIR / f"{name}.py")
        except (PyFlinkRunFailedError, subprocess.TimeoutExpired) as error:
            sys.stderr.write(f"{error}\n")
            failed.append(name)
            continue
        (EXPECTED_DIR / f"{name}.txt").write_text(output, encoding="utf-8")
        sys.stdout.write(f"{name}: {len(output.splitlines())} lines (PyFlink {version})\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
