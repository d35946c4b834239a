"""A headless Chromium for the dashboard's browser test, installed without root.

Debian's ``chromium-headless-shell`` and the libraries it needs beyond a minimal Debian 12
are fetched with ``apt-get download`` (no root: it only writes the .deb files into the current
directory) and unpacked with ``dpkg -x`` into ``.browser/chromium`` under the repository;
the shell runs from there with ``LD_LIBRARY_PATH`` pointing at the unpacked libraries.
Playwright (PyPI) drives it through ``executable_path`` and downloads no browser of its own.
docs/decisions.md, "A browser for the dashboard test", says why.

On a fresh machine apt's package lists may be missing (a container image ships without
them), and then ``apt-get download`` knows no package. ``apt-get update`` is run first in that
case, into a private state and cache directory under ``.browser/apt`` (``-o Dir::State=…
-o Dir::Cache=…``), as root or not: it needs no root and leaves the system's apt state as it
was; the download then reads those lists.

``python -m tests.browser.chromium`` provisions it (``make test`` does, once); ``ensure()``
returns it, provisioning on first use, or raises ``BrowserUnavailable`` saying why (no
apt-get, lists that cannot be updated, a package that cannot be fetched, a library still
missing after unpacking). ``make test`` and ``.ci/run`` set ``FLINTLOCK_REQUIRE_BROWSER=1``,
which makes the browser test fail instead of skip when the browser is unavailable
(``required()``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / ".browser"
PRIVATE_APT = ROOT / "apt"
REQUIRE = "FLINTLOCK_REQUIRE_BROWSER"
UNPACKED = ROOT / "chromium"
SHELL = UNPACKED / "usr" / "lib" / "chromium" / "chromium-headless-shell"
LIBRARIES = (UNPACKED / "usr" / "lib" / "x86_64-linux-gnu",
             UNPACKED / "usr" / "lib" / "x86_64-linux-gnu" / "pulseaudio")
PACKAGES = (
    # the browser
    "chromium-headless-shell", "chromium-common",
    # its libraries that a minimal Debian 12 lacks (found with ldd, one round at a time)
    "libopenh264-7", "libdouble-conversion3", "libopus0", "libharfbuzz-subset0", "libxnvctrl0",
    "libpulse0", "libflac12", "libminizip1", "libogg0", "libsndfile1", "libasyncns0",
    "libvorbis0a", "libvorbisenc2", "libmpg123-0", "libmp3lame0",
    # and the one bookworm-security's newer build needs too (lists updated on a fresh machine
    # include the security suite)
    "libopenjp2-7",
)


class BrowserUnavailable(Exception):
    """Headless Chromium cannot be installed or started here (the message says why)."""


@dataclass(frozen=True)
class Chromium:
    executable: Path
    env: dict[str, str]


def _env() -> dict[str, str]:
    paths = [str(p) for p in LIBRARIES] + [os.environ.get("LD_LIBRARY_PATH", "")]
    return {**os.environ, "LD_LIBRARY_PATH": ":".join(p for p in paths if p)}


def _missing_libraries() -> list[str]:
    result = subprocess.run(["ldd", str(SHELL)], env=_env(), capture_output=True, text=True,
                            timeout=60, check=False)
    return [line.split("=>")[0].strip() for line in result.stdout.splitlines()
            if "not found" in line]


def required() -> bool:
    """Whether an unavailable browser fails the test rather than skips it (``make test``,
    ``.ci/run``: ``FLINTLOCK_REQUIRE_BROWSER=1``)."""
    return os.environ.get(REQUIRE, "0") not in ("", "0")


def private_apt_options(directory: Path, root: bool) -> list[str]:
    """apt options that keep the package lists and the download cache in ``directory``; as
    root, also no switch to the ``_apt`` user, who may not write there."""
    options = ["-o", f"Dir::State={directory / 'state'}",
               "-o", f"Dir::Cache={directory / 'cache'}", "-o", "Debug::NoLocking=1"]
    return options + (["-o", "APT::Sandbox::User=root"] if root else [])


def _run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900,
                          check=False)


def apt_options(run: Callable[..., subprocess.CompletedProcess[str]] = _run,
                directory: Path = PRIVATE_APT, root: bool | None = None,
                refresh: bool = False) -> list[str]:
    """The options for ``apt-get download``: none where the system's lists know the browser
    package; otherwise private lists, updated now unless an earlier provisioning did
    (``refresh``: updated in any case). ``BrowserUnavailable`` if the update fails."""
    if not refresh and run(["apt-cache", "show", PACKAGES[0]]).returncode == 0:
        return []
    options = private_apt_options(directory, os.geteuid() == 0 if root is None else root)
    if not refresh and run(["apt-cache", *options, "show", PACKAGES[0]]).returncode == 0:
        return options
    (directory / "state" / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (directory / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    updated = run(["apt-get", *options, "update"])
    if updated.returncode != 0:
        raise BrowserUnavailable("apt's package lists are missing and apt-get update failed: "
                                 f"{updated.stderr.strip()[-800:]}")
    return options


def provision() -> Chromium:
    """Fetches and unpacks the packages unless they are unpacked already."""
    if not SHELL.exists():
        if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
            raise BrowserUnavailable("apt-get and dpkg are needed to fetch Debian's "
                                     "chromium-headless-shell; this system has neither")
        debs = ROOT / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        fetched = _run(["apt-get", *apt_options(), "download", *PACKAGES], cwd=debs)
        if fetched.returncode != 0:  # stale lists (a version gone from the mirror): update
            fetched = _run(["apt-get", *apt_options(refresh=True), "download", *PACKAGES],
                           cwd=debs)
        if fetched.returncode != 0:
            raise BrowserUnavailable(f"apt-get download failed: {fetched.stderr.strip()[-800:]}")
        for deb in sorted(debs.glob("*.deb")):
            subprocess.run(["dpkg", "-x", str(deb), str(UNPACKED)], check=True, timeout=300)
        shutil.rmtree(debs)
    missing = _missing_libraries()
    if missing:
        raise BrowserUnavailable(f"{SHELL} still lacks {missing}: add their packages to "
                                 "tests/browser/chromium.py PACKAGES")
    return Chromium(SHELL, _env())


def ensure() -> Chromium:
    try:
        return provision()
    except (OSError, subprocess.SubprocessError) as error:
        raise BrowserUnavailable(f"cannot provision headless Chromium: {error}") from error


if __name__ == "__main__":
    try:
        chromium = ensure()
    except BrowserUnavailable as error:
        print(f"headless Chromium: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"headless Chromium ready: {chromium.executable}")
