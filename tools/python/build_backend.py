"""build_backend.py - the PEP 517 backend that `pip install ./tools/python` uses.

It writes the wheel with the standard library alone (zipfile, hashlib),
so installing the module needs no network, no setuptools and no wheel
package: the package is pure Python, a folder of .py files and the
metadata PEP 427 asks for.
"""
import base64
import hashlib
import os
import zipfile

NAME = "bfi"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
TAG = "py3-none-any"
DIST = f"{NAME}-{VERSION}.dist-info"


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
        if name.endswith(".py"):
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
    files = _files()
    files.append((f"{DIST}/METADATA", _metadata().encode()))
    files.append((f"{DIST}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: bfi build_backend.py\n"
        "Root-Is-Purelib: true\n"
        f"Tag: {TAG}\n").encode()))
    record = "".join(_record_line(p, d) for p, d in files) + f"{DIST}/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            z.writestr(p, d)
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
