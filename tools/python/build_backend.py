"""build_backend.py - the PEP 517 backend that `pip install ./tools/python` uses.

It writes the wheel with the standard library alone (zipfile, hashlib),
so installing the module needs no network, no setuptools and no wheel
package: the package's .py files, the metadata PEP 427 asks for, and
libbfi.so itself, so that the wheel works where bfi was never installed
(a fresh venv, conda, pyenv). The library is the one built in the source
tree (ninja libbfi.so, which this runs if build.ninja is there and the
library is not), or the file BFI_LIBRARY names.
"""
import base64
import hashlib
import os
import subprocess
import sysconfig
import zipfile

NAME = "bfi"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the source tree: tools/python is two below
SONAME = "libbfi.so.3"  # as bfi/_ffi.py loads it from beside itself
# a wheel holding a shared library is for this platform and Python's ABI-free ctypes
TAG = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
DIST = f"{NAME}-{VERSION}.dist-info"


def _library():
    """The bytes of libbfi.so to bundle, or an error saying how to get one."""
    path = os.environ.get("BFI_LIBRARY") or os.path.join(ROOT, "libbfi.so")
    if not os.path.isfile(path) and not os.environ.get("BFI_LIBRARY") and \
            os.path.isfile(os.path.join(ROOT, "build.ninja")):
        subprocess.run(["ninja", "-C", ROOT, "libbfi.so"], check=True)
    if not os.path.isfile(path):
        raise RuntimeError(f"bfi: no libbfi.so to put in the wheel at {path}: build it first "
                           "(./configure && ninja libbfi.so in the source tree) or set "
                           "BFI_LIBRARY to one")
    with open(path, "rb") as f:
        return f.read()


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {VERSION}\n"
        "Summary: Which sets may contain a key? Memory-mapped Bloom filter index snapshots\n"
        "Requires-Python: >=3.8\n"
        "Provides-Extra: numpy\n"
        "Requires-Dist: numpy; extra == \"numpy\"\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _files():
    """(path in the wheel, bytes) for every file of the package."""
    out = []
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") and name != "_libpath.py":
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return DIST


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = f"{NAME}-{VERSION}-{TAG}.whl"
    files = _files() + [(f"{NAME}/{SONAME}", _library())]
    files.append((f"{DIST}/METADATA", _metadata().encode()))
    files.append((f"{DIST}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: bfi build_backend.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {TAG}\n").encode()))
    record = "".join(_record_line(p, d) for p, d in files) + f"{DIST}/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            info = zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if p.endswith(SONAME) else 0o644) << 16
            z.writestr(info, d)
        z.writestr(f"{DIST}/RECORD", record)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    import tarfile

    base = f"{NAME}-{VERSION}"
    out = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(out, "w:gz") as t:
        for name in ("pyproject.toml", "README.md", "build_backend.py"):
            t.add(os.path.join(HERE, name), f"{base}/{name}")
        for p, _ in _files():
            t.add(os.path.join(HERE, p), f"{base}/{p}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        import io

        t.addfile(info, io.BytesIO(data))
    return os.path.basename(out)
