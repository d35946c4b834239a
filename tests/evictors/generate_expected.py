"""Regenerates ``expected.txt``: compiles ``EvictorsOracle.java`` against the Flink jars of a
PyFlink installation and runs it on Flink's local mini-cluster. Not a test and never imported
by one (it takes two to three minutes).

PyFlink 2.3.0 has no Python evictors (its ``pyflink.datastream.window`` has none and its
``WindowedStream`` no ``evictor()``), so flintlock's evictors follow Java Flink's; the oracle is
the Java API of the same release, from the ``flink-dist`` jar that PyFlink ships. Usage (from the
repository root; ``javac`` and ``java`` 17 on the PATH)::

    .venv/bin/python tests/evictors/generate_expected.py --python /tmp/pyflink-venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAVA_OPENS = ["--add-opens", "java.base/java.util=ALL-UNNAMED",
              "--add-opens", "java.base/java.lang=ALL-UNNAMED"]
TIMEOUT_S = 900


def flink_classpath(python: Path) -> str:
    found = subprocess.run(
        [str(python), "-c", "import os, pyflink; print(os.path.dirname(pyflink.__file__))"],
        capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    jars = sorted((Path(found) / "lib").glob("*.jar"))
    if not jars:
        raise FileNotFoundError(f"no Flink jars under {found}/lib")
    return os.pathsep.join(map(str, jars))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, required=True,
                        help="python of a virtualenv with apache-flink installed")
    args = parser.parse_args(argv)
    classpath = flink_classpath(args.python)
    with tempfile.TemporaryDirectory(prefix="evictors-oracle-") as classes:
        subprocess.run(["javac", "-d", classes, "-cp", classpath,
                        str(HERE / "EvictorsOracle.java")], check=True, timeout=TIMEOUT_S)
        run = subprocess.run(
            ["java", *JAVA_OPENS, "-cp", os.pathsep.join([classes, classpath]),
             "EvictorsOracle"], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=classes)
    if run.returncode != 0:
        sys.stderr.write(run.stderr[-4000:])
        return 1
    (HERE / "expected.txt").write_text(run.stdout, encoding="utf-8")
    sys.stdout.write(f"expected.txt: {len(run.stdout.splitlines())} lines\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
