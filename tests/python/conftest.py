"""Shared fixtures of the Python tests: where the sources, models and the
command line are (CMake sets WEIR_SOURCE_DIR and WEIR_CLI)."""

import os
import pathlib

import pytest

SOURCE = pathlib.Path(os.environ.get(
    "WEIR_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "resources" / "models"
CLI = os.environ.get("WEIR_CLI", str(SOURCE / "build" / "default" / "app" / "weir"))


@pytest.fixture
def models():
    return MODELS


@pytest.fixture
def cli():
    return CLI
