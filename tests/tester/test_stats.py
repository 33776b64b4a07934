from __future__ import annotations

import pytest

from labtester.stats import max_overlap, percentiles, spread


def test_spread_is_median_min_max() -> None:
    result = spread([3.0, 1.0, 2.0, 10.0])
    assert (result.median, result.minimum, result.maximum, result.count) == (2.5, 1.0, 10.0, 4)
    assert result.relative_spread == pytest.approx(9 / 2.5)


def test_spread_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        spread([])


def test_percentiles_come_from_raw_values() -> None:
    values = list(range(1, 101))
    assert percentiles(values, [50, 99, 100]) == {"p50": 50.5, "p99": pytest.approx(99.01), "p100": 100.0}


def test_max_overlap() -> None:
    assert max_overlap([(0, 1), (1, 2), (2, 3)]) == 1  # touching is not overlapping
    assert max_overlap([(0, 2), (1, 3), (1.5, 1.6)]) == 3
    assert max_overlap([]) == 0
