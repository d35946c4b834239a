"""``-v`` logs at INFO, ``-vv`` at DEBUG, none at WARNING; ``--version`` (issue 30)."""

import logging

import pytest

from flintlock import __version__
from flintlock.cli.main import main


@pytest.mark.parametrize(("flags", "level"), [
    ([], logging.WARNING), (["-v"], logging.INFO), (["-vv"], logging.DEBUG),
    (["-v", "-v"], logging.DEBUG)])
def test_verbosity_sets_the_log_level(flags, level, monkeypatch, tmp_path):
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path))
    root = logging.getLogger()
    before = root.level
    try:
        assert main([*flags, "list"]) == 0
        assert root.level == level
    finally:
        root.setLevel(before)


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip().startswith(f"flintlock {__version__}")
