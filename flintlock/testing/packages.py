"""Tiny real artifacts for tests of the job's Python dependencies (``usercode.python_env``):
a pure-Python wheel pip installs offline, and zip / tar archives of given files.

Stateless helpers; each writes only the path it is given.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile
from collections.abc import Mapping


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest},{len(data)}"


def build_wheel(directory: str, package: str, version: str, source: str) -> str:
    """Writes ``<package>-<version>-py3-none-any.whl`` holding ``<package>/__init__.py`` with
    ``source`` into ``directory``; returns its path. The distribution's name is ``package``
    with underscores (``pip install <package>==<version>`` finds it offline)."""
    info = f"{package}-{version}.dist-info"
    files = {
        f"{package}/__init__.py": source.encode(),
        f"{info}/METADATA": (f"Metadata-Version: 2.1\nName: {package}\n"
                             f"Version: {version}\n").encode(),
        f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: flintlock.testing\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    }
    record = "".join(f"{name},{_record_hash(data)}\n" for name, data in files.items())
    record += f"{info}/RECORD,,\n"
    path = os.path.join(directory, f"{package}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", record)
    return path


def build_zip(path: str, files: Mapping[str, bytes]) -> str:
    """A zip archive of ``files`` (member name → content) at ``path``."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def build_tar(path: str, files: Mapping[str, bytes], compression: str = "gz") -> str:
    """A tar archive of ``files`` at ``path``; ``compression``: "gz", "bz2", "xz" or ""."""
    with tarfile.open(path, f"w:{compression}") as archive:  # type: ignore[call-overload]
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return path
