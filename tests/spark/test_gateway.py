"""The driver JVM's cached launch command (``flintlock.spark.gateway``), without a Spark session."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from pyspark.find_spark_home import _find_spark_home

from flintlock.spark import gateway
from flintlock.spark.gateway import (
    SUBMIT_CLASS,
    DriverCommand,
    command_key,
    driver_command,
    parse_environment,
    parse_launcher_output,
    unsupported_reason,
)

JAVA = sys.executable  # a program that exists: cached commands must name one
SETTINGS = [("spark.master", "local[2]"), ("spark.app.name", "flintlock"),
            ("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")]


def _fake_spark_home(tmp_path: Path) -> str:
    (tmp_path / "jars").mkdir(parents=True)
    (tmp_path / "jars" / "spark-core.jar").write_bytes(b"jar")
    return str(tmp_path)


def _environ() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "JAVA_HOME": "/opt/java"}


def test_the_launchers_answer_is_cut_after_spark_submits_class() -> None:
    output = (b"a message\n\0\n/usr/bin/java\0-cp\0/spark/jars/*\0-Xmx1g\0"
              + SUBMIT_CLASS.encode() + b"\0--conf\0spark.master=local[2]\0pyspark-shell\0")
    assert parse_launcher_output(output) == ("/usr/bin/java", "-cp", "/spark/jars/*", "-Xmx1g",
                                             SUBMIT_CLASS)
    with pytest.raises(ValueError, match="names no"):
        parse_launcher_output(b"\0\nsomething else\0")


def test_the_command_passes_every_setting_as_pyspark_does() -> None:
    command = DriverCommand(("java", SUBMIT_CLASS), {})
    assert command.argv([("spark.master", "local[2]"), ("spark.x", "a=b c")]) == [
        "java", SUBMIT_CLASS, "--conf", "spark.master=local[2]", "--conf", "spark.x=a=b c",
        "pyspark-shell"]


def test_environment_dump_is_parsed_with_values_holding_equals_signs() -> None:
    assert parse_environment(b"A=1\0B=x=y\0\0EMPTY=\0") == {"A": "1", "B": "x=y", "EMPTY": ""}


@pytest.mark.parametrize("name", ["PYSPARK_SUBMIT_ARGS", "SPARK_PREPEND_CLASSES",
                                  "PYSPARK_GATEWAY_PORT"])
def test_what_the_scripts_would_handle_otherwise_falls_back_to_spark_submit(
        tmp_path: Path, name: str) -> None:
    home = _fake_spark_home(tmp_path)
    assert unsupported_reason(home, _environ()) is None
    assert unsupported_reason(home, {**_environ(), name: "x"}) == f"{name} is set"


def test_a_spark_env_script_falls_back_to_spark_submit(tmp_path: Path) -> None:
    home = _fake_spark_home(tmp_path)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-env.sh").write_text("export X=1\n")
    assert unsupported_reason(home, _environ()) == "a spark-env.sh"
    assert unsupported_reason(str(tmp_path / "nowhere"), _environ()) == "no jars directory"


def test_the_key_follows_driver_settings_environment_and_conf_files_only(
        tmp_path: Path) -> None:
    home = _fake_spark_home(tmp_path)
    key = command_key("/opt/java/bin/java", home, SETTINGS, _environ())
    assert command_key("/opt/java/bin/java", home, [*SETTINGS, ("spark.ui.enabled", "false")],
                       _environ()) == key
    assert command_key("/opt/java/bin/java", home, [*SETTINGS, ("spark.driver.memory", "2g")],
                       _environ()) != key
    assert command_key("/opt/java/bin/java", home, SETTINGS,
                       {**_environ(), "SPARK_SUBMIT_OPTS": "-Dx=1"}) != key
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("spark.driver.memory 2g\n")
    assert command_key("/opt/java/bin/java", home, SETTINGS, _environ()) != key


def test_the_command_is_probed_once_then_read_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _fake_spark_home(tmp_path / "spark")
    probed: list[object] = []

    def probe(*args: object) -> DriverCommand:
        probed.append(args)
        return DriverCommand((JAVA, SUBMIT_CLASS), {"PYTHONHASHSEED": "0"})

    monkeypatch.setattr(gateway, "_probe", probe)
    first = driver_command(home, SETTINGS, _environ(), str(tmp_path / "cache"))
    again = driver_command(home, SETTINGS, _environ(), str(tmp_path / "cache"))
    assert first == again and first is not None and first.environment == {"PYTHONHASHSEED": "0"}
    assert len(probed) == 1


def test_a_failed_probe_means_launching_through_spark_submit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def probe(*args: object) -> DriverCommand:
        raise OSError("no bash today")

    monkeypatch.setattr(gateway, "_probe", probe)
    home = _fake_spark_home(tmp_path / "spark")
    assert driver_command(home, SETTINGS, _environ(), str(tmp_path / "cache")) is None
    assert not (tmp_path / "cache" / "launch").exists() or not any(
        (tmp_path / "cache" / "launch").iterdir())


def test_the_real_launcher_gives_the_driver_its_options_and_the_scripts_environment(
        tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("SPARK_", "PYSPARK_SUBMIT"))}
    command = driver_command(_find_spark_home(), SETTINGS, environ, str(tmp_path))
    assert command is not None
    assert command.prefix[-1] == SUBMIT_CLASS
    assert "-XX:TieredStopAtLevel=1" in command.prefix and "-Xmx1g" in command.prefix
    assert command.environment.get("PYTHONHASHSEED") == "0"  # spark-submit's export
    assert "SHLVL" not in command.environment and "PWD" not in command.environment


@pytest.mark.parametrize("entry", [
    "{not json", "{}", '{"prefix": 3, "environment": []}',
    # what an earlier parser cached: the launcher's leading newline in the program's name
    json.dumps({"prefix": [f"\n{JAVA}", SUBMIT_CLASS], "environment": {}}),
    json.dumps({"prefix": [JAVA, "-Xmx1g"], "environment": {}})])
def test_an_unreadable_cache_entry_is_probed_again_and_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    good = DriverCommand((JAVA, SUBMIT_CLASS), {})
    monkeypatch.setattr(gateway, "_probe", lambda *args: good)
    home = _fake_spark_home(tmp_path / "spark")
    key = command_key("/opt/java/bin/java", home, SETTINGS, _environ())
    (tmp_path / "cache" / "launch").mkdir(parents=True)
    (tmp_path / "cache" / "launch" / f"{key}.json").write_text(entry)
    assert driver_command(home, SETTINGS, _environ(), str(tmp_path / "cache")) == good
    monkeypatch.setattr(gateway, "_probe", lambda *args: pytest.fail("probed twice"))
    assert driver_command(home, SETTINGS, _environ(), str(tmp_path / "cache")) == good
