"""How the browser test's Chromium is fetched on a fresh machine, and when its absence fails
the run: the apt commands ``chromium.apt_options`` runs (recorded, not run), and the skip that
``FLINTLOCK_REQUIRE_BROWSER=1`` (``make test``, ``.ci/run``) turns into a failure."""

import subprocess

import pytest

from tests.browser import chromium
from tests.browser.test_dashboard_browser import _unavailable


class Apt:
    """Records apt commands; ``apt-cache show`` succeeds once lists are known (the system's
    or, after an update, the private ones)."""

    def __init__(self, system_lists, update_fails=False):
        self.system_lists = system_lists
        self.private_lists = False
        self.update_fails = update_fails
        self.commands = []

    def __call__(self, command, cwd=None):
        self.commands.append(command)
        private = any(part.startswith("Dir::State=") for part in command)
        code = 0
        if command[-1] == "update":
            code = 100 if self.update_fails else 0
            self.private_lists = private and not self.update_fails
        elif "show" in command:
            code = 0 if (self.private_lists if private else self.system_lists) else 100
        return subprocess.CompletedProcess(command, code, "", "E: no network" if code else "")


def test_the_system_lists_are_used_where_they_know_the_browser(tmp_path):
    apt = Apt(system_lists=True)
    assert chromium.apt_options(apt, tmp_path, root=False) == []
    assert apt.commands == [["apt-cache", "show", "chromium-headless-shell"]]


@pytest.mark.parametrize("root", [False, True])
def test_missing_lists_are_updated_first_into_a_private_directory(tmp_path, root):
    apt = Apt(system_lists=False)
    options = chromium.apt_options(apt, tmp_path, root=root)
    private = chromium.private_apt_options(tmp_path, root)
    assert options == private
    assert f"Dir::State={tmp_path / 'state'}" in options
    assert f"Dir::Cache={tmp_path / 'cache'}" in options
    assert ("APT::Sandbox::User=root" in options) == root
    assert apt.commands == [["apt-cache", "show", "chromium-headless-shell"],
                            ["apt-cache", *private, "show", "chromium-headless-shell"],
                            ["apt-get", *private, "update"]]
    assert (tmp_path / "state" / "lists" / "partial").is_dir()
    assert (tmp_path / "cache" / "archives" / "partial").is_dir()

    apt.commands.clear()  # a second provisioning reuses the private lists
    assert chromium.apt_options(apt, tmp_path, root=root) == private
    assert [c[-1] for c in apt.commands] == ["chromium-headless-shell"] * 2


def test_a_refresh_updates_the_private_lists_even_where_the_system_knows_the_browser(
        tmp_path):
    apt = Apt(system_lists=True)
    options = chromium.apt_options(apt, tmp_path, root=False, refresh=True)
    assert apt.commands == [["apt-get", *options, "update"]]


def test_an_update_that_fails_says_so(tmp_path):
    apt = Apt(system_lists=False, update_fails=True)
    with pytest.raises(chromium.BrowserUnavailable, match="apt-get update failed: E: no net"):
        chromium.apt_options(apt, tmp_path, root=False)


@pytest.mark.parametrize("value, fails", [(None, False), ("0", False), ("", False),
                                          ("1", True)])
def test_an_unavailable_browser_fails_the_run_only_where_it_is_required(
        monkeypatch, value, fails):
    if value is None:
        monkeypatch.delenv(chromium.REQUIRE, raising=False)
    else:
        monkeypatch.setenv(chromium.REQUIRE, value)
    expected = pytest.fail.Exception if fails else pytest.skip.Exception
    with pytest.raises(expected, match="no browser here"):
        _unavailable("no browser here")
