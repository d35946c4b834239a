import pytest
from flintlock.testing.executor import use_thread_executor
from tests.parity.harness import Expected, run_ported

@pytest.mark.parametrize("name", ["types_roundtrip", "environment_settings", "side_outputs"])
def test_gap(name, monkeypatch, capsys):
    use_thread_executor(monkeypatch)
    expected = Expected(name, ordered=False)
    try:
        run_ported(name)
    finally:
        got = expected.normalize(capsys.readouterr().out)
        exp = expected.lines()
        print("\nMISSING", [l for l in exp if l not in got])
        print("EXTRA", [l for l in got if l not in exp])
    assert got == exp
