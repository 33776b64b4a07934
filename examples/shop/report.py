"""Sales figures summed up in Python from the order lines: the year's report (every category by
month and region, the median order, the best month) and one category's trend (units sold per day,
smoothed over four weeks, and the median order of each month), which a product page shows."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from examples.shop.catalog import CATEGORIES, REGIONS, order_lines

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def sales_report() -> dict[str, Any]:
    revenue: dict[str, list[int]] = {category: [0] * 12 for category in CATEGORIES}
    by_region: dict[str, int] = dict.fromkeys(REGIONS, 0)
    order_values: dict[str, list[int]] = defaultdict(list)
    for category, region, day, quantity, unit_price in order_lines():
        value = quantity * unit_price
        revenue[category][min(day * 12 // 365, 11)] += value
        by_region[region] += value
        order_values[category].append(value)
    rows: list[dict[str, Any]] = [
        {
            "category": category,
            "months": [round(cents / 100) for cents in months],
            "total": round(sum(months) / 100),
            "best_month": MONTHS[months.index(max(months))],
            "median_order": round(statistics.median(order_values[category]) / 100, 2),
        }
        for category, months in revenue.items()
    ]
    rows.sort(key=lambda row: row["total"], reverse=True)
    return {
        "months": MONTHS,
        "categories": rows,
        "regions": {region: round(cents / 100) for region, cents in by_region.items()},
        "total": sum(row["total"] for row in rows),
    }


TREND_WINDOW_DAYS = 28


def category_trend(category: str) -> dict[str, Any]:
    units = [0] * 365
    values_by_month: list[list[int]] = [[] for _ in MONTHS]
    for _, _, day, quantity, unit_price in order_lines(category):
        units[day] += quantity
        values_by_month[min(day * 12 // 365, 11)].append(quantity * unit_price)
    smoothed = [
        round(statistics.fmean(units[max(0, day - TREND_WINDOW_DAYS + 1) : day + 1]), 2) for day in range(365)
    ]
    medians = [round(statistics.median(values) / 100, 2) if values else 0.0 for values in values_by_month]
    peak = max(range(365), key=smoothed.__getitem__)
    return {
        "category": category,
        "smoothed_units": smoothed,
        "peak_day": peak,
        "median_order_by_month": medians,
    }
