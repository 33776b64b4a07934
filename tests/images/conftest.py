"""Fixtures for the image tests; skipped unless `make test-images` built the images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.images.containers import TAG, Containers

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without built images (`make test`), skip these visibly rather than fail."""
    if TAG:
        return
    skip = pytest.mark.skip(reason="needs the built images: `make test-images` builds and runs them")
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(skip)


@pytest.fixture(scope="module")
def containers() -> Iterator[Containers]:
    started = Containers()
    yield started
    started.remove_all()
