#!/usr/bin/env python3
"""Checks that the checked-in stubs of gpusched._core (src/gpusched/_core.pyi) match the installed
extension, and type-checks the pure-Python package against them with mypy --strict.

    python3 python/tools/check_stubs.py            # exit 1 with a diff when stale
    python3 python/tools/check_stubs.py --update   # regenerate after changing the bindings

Generation: pybind11-stubgen (flags below) on the installed gpusched._core.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent / "src" / "gpusched"
STUB = PACKAGE / "_core.pyi"


def generate() -> str:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [sys.executable, "-m", "pybind11_stubgen", "gpusched._core", "--exit-code", "--numpy-array-use-type-var",
             "-o", out],
            check=True,
        )
        return (Path(out) / "gpusched" / "_core.pyi").read_text(encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="rewrite the checked-in stub")
    parser.add_argument("--no-mypy", action="store_true", help="skip mypy")
    args = parser.parse_args()
    fresh = generate()
    if args.update:
        STUB.write_text(fresh, encoding="utf-8")
        print(f"wrote {STUB}")
    else:
        current = STUB.read_text(encoding="utf-8") if STUB.exists() else ""
        if current != fresh:
            sys.stdout.writelines(
                difflib.unified_diff(current.splitlines(True), fresh.splitlines(True), str(STUB), "generated")
            )
            print(f"\n{STUB} is stale: run python3 python/tools/check_stubs.py --update", file=sys.stderr)
            return 1
        print(f"stubs up to date: {STUB}")
    if not args.no_mypy:
        # The checked-in package (not the installed copy), so that its .py files and _core.pyi are checked together.
        mypy = [sys.executable, "-m", "mypy", "--config-file", str(HERE.parent / "pyproject.toml"), "-p", "gpusched"]
        if subprocess.run(mypy, cwd=PACKAGE.parent).returncode != 0:
            print("mypy --strict found type errors in the gpusched package (above)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
