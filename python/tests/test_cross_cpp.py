"""Python and C++ give identical decisions: examples/mixed_workload.cpp (a static profile, compiled)
against examples/python/mixed_workload.py (the same scenario through a dynamic profile built from
Python), compared line by line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO


def cpp_example() -> Path | None:
    env = os.environ.get("GPUSCHED_CXX_EXAMPLES_DIR")
    dirs = [Path(env)] if env else [REPO / "build" / "release" / "examples", REPO / "build" / "examples"]
    for d in dirs:
        exe = d / "mixed_workload"
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    return None


def test_mixed_workload_matches_the_cpp_example() -> None:
    exe = cpp_example()
    if exe is None:
        pytest.skip("the C++ example mixed_workload is not built (cmake --build <dir> --target mixed_workload; "
                    "set GPUSCHED_CXX_EXAMPLES_DIR to its folder when not build/main/examples)")
    cpp = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    py = subprocess.run([sys.executable, str(REPO / "examples" / "python" / "mixed_workload.py")], check=True,
                        capture_output=True, text=True).stdout
    assert py.splitlines() == cpp.splitlines()
    assert "15/17 pods placed" in py  # 4 trainings fill 4 V100 nodes, the fifth and the 40 GiB pod do not fit
