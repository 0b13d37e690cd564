from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Derandomised and without an example database: the same examples on every run and machine.
settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=500, deadline=None, database=None)
settings.load_profile(os.environ.get("GPUSCHED_HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def seed_config() -> Path:
    return REPO / "data" / "scheduler-config.yaml"
