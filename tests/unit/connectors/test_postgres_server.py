"""The JDBC tests' PostgreSQL comes from the test extra (the ``pgserver`` wheel), never from
PATH; it listens on 127.0.0.1 only, runs as an unprivileged account under root, works from a
copy of the binaries when that account cannot reach the installed ones, leaves nothing behind,
and a missing extra is an error, not a skip."""

import importlib.util
import os
import pwd
import subprocess

import pytest

from . import postgres_server as helper


def _server_facts(server):
    with server.connect() as connection:
        return dict(connection.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('listen_addresses', "
            "'data_directory', 'max_prepared_transactions')").fetchall()), connection.execute(
            "SELECT current_user").fetchone()[0]


def test_the_server_is_the_test_extras_and_listens_on_loopback_only():
    install = helper.postgres_install()
    assert install.parent.name == "pgserver"
    with helper.postgres_server() as server:
        settings, user = _server_facts(server)
        directory = server.directory
        if os.geteuid() == 0:
            assert directory.stat().st_uid != 0  # the server's files are not root's
    assert settings["listen_addresses"] == "127.0.0.1"
    assert int(settings["max_prepared_transactions"]) > 0
    assert settings["data_directory"] == str(directory / "data") and user == "postgres"
    assert server.jdbc_url.startswith("jdbc:postgresql://127.0.0.1:")
    assert not directory.exists()


def test_binaries_out_of_the_accounts_reach_are_run_from_a_copy(tmp_path, monkeypatch):
    account = pwd.getpwuid(os.geteuid())  # under root the helper passes 'nobody'
    monkeypatch.setattr(helper, "_world_reachable", lambda binary: False)
    copy = helper._reachable(helper.postgres_install(), tmp_path, account)
    assert copy == tmp_path / "pkg" / "pgserver" / "pginstall"
    # the binary finds its vendored libraries ($ORIGIN/../../../pgserver.libs) in the copy
    version = subprocess.run([str(copy / "bin" / "postgres"), "--version"], capture_output=True,
                             text=True, timeout=60, check=True)
    assert version.stdout.startswith("postgres (PostgreSQL) 16")


def test_a_missing_test_extra_is_an_error_that_says_how_to_install_it(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pgserver" else real_find_spec(name, *a))
    with pytest.raises(helper.PostgresServerUnavailableError, match=r"\.\[test\]"), \
            helper.postgres_server():
        pass
