"""The daemon's path: the zips of an installed PySpark go, other entries stay in order."""

from __future__ import annotations

import os
from pathlib import Path

from flintlock.spark.worker_path import installed_first


def _installed(tmp_path: Path, *packages: str) -> Path:
    site = tmp_path / "site-packages"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    for package in packages:
        (site / package).mkdir(exist_ok=True)
        (site / package / "__init__.py").write_text("")
    for name in ("pyspark.zip", "py4j-0.10.9.9-src.zip"):
        (lib / name).write_bytes(b"PK")
    return site


def test_the_zips_of_an_installed_pyspark_and_py4j_leave_the_path(tmp_path):
    site = _installed(tmp_path, "pyspark", "py4j")
    lib = site / "pyspark" / "python" / "lib"
    path = ["", str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"),
            "/opt/jars/spark-core.jar", "/usr/lib/python3.11", str(site)]
    assert installed_first(path) == ["", "/opt/jars/spark-core.jar", "/usr/lib/python3.11",
                                     str(site)]


def test_a_zip_stays_when_its_package_is_not_installed_beside_it(tmp_path):
    site = _installed(tmp_path, "pyspark")  # no py4j package beside this pyspark
    lib = site / "pyspark" / "python" / "lib"
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    assert installed_first(path) == [str(lib / "py4j-0.10.9.9-src.zip")]


def test_a_spark_home_of_its_own_keeps_its_zips(tmp_path):
    home = tmp_path / "spark-4.0.0" / "python" / "lib"
    home.mkdir(parents=True)
    path = [str(home / "pyspark.zip"), str(home / "py4j-0.10.9.9-src.zip"), os.sep]
    assert installed_first(path) == path


def test_this_installation_is_recognised():
    import pyspark

    site = Path(pyspark.__file__).parents[1]
    lib = site / "pyspark" / "python" / "lib"
    zips = sorted(str(p) for p in lib.glob("*.zip"))
    assert zips, f"no zips in {lib}: Spark's worker path has changed"
    assert installed_first(zips) == []
