"""axe-core for the browser tests: the pinned npm package, fetched once and cached (like reveal.js).

    python tools/axe.py            # prints the path of axe.min.js (fetches it the first time)

axe-core@4.14.1 (MPL-2.0) is not committed. It is taken with `npm pack`, checked against the
registry's sha512 integrity, and cached in _build/.cache/; only axe.min.js is unpacked.
tests/site/test_a11y.py injects it into every page and runs the WCAG 2.1 A/AA rules.
"""
from __future__ import annotations

import base64
import hashlib
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".cache"
AXE_VERSION = "4.14.1"
AXE_INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37Ogud"
                 "VGtQ==")


def _integrity(path: pathlib.Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def axe_script() -> pathlib.Path:
    """Path of the pinned axe.min.js (fetched with npm on first use, integrity-checked)."""
    script = CACHE / f"axe-core-{AXE_VERSION}.min.js"
    if script.exists():
        return script
    tarball = CACHE / f"axe-core-{AXE_VERSION}.tgz"
    if not tarball.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit(f"需要 npm 来取得 axe-core@{AXE_VERSION}")
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([npm, "pack", f"axe-core@{AXE_VERSION}", "--silent", "--pack-destination", tmp],
                           check=True, stdout=subprocess.DEVNULL, cwd=tmp)
            shutil.move(str(pathlib.Path(tmp) / f"axe-core-{AXE_VERSION}.tgz"), tarball)
    if _integrity(tarball) != AXE_INTEGRITY:
        tarball.unlink()
        raise SystemExit(f"{tarball} 不是 axe-core {AXE_VERSION}（sha512 校验不符）")
    with tarfile.open(tarball) as tar:
        data = tar.extractfile("package/axe.min.js").read()
    script.write_bytes(data)
    return script


if __name__ == "__main__":
    sys.stdout.write(f"{axe_script()}\n")
