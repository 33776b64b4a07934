"""The Django shop's views, plain `def` as most Django code is, with real ORM work on SQLite:

/products?category=lamps   a list: one aggregate query (products with their rating), JSON
/report                    the year's sales: ORM aggregates by category, region and month in SQL,
                           and the median order of each category from its 40,000 order lines
                           (rows the ORM reads and Python sorts), JSON
/products/7/page           a page: the product, its reviews, what was bought with it, its
                           category's revenue by month, rendered by a Django template
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from django.db.models import Avg, Count, F, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render

from examples.django_shop.models import Order, Product

PRODUCTS_LIMIT = 50
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _month(day: int) -> int:
    return min(day * 12 // 365, 11)


def products(request: HttpRequest) -> JsonResponse:
    found = Product.objects.annotate(rating=Avg("reviews__stars"), review_count=Count("reviews"))
    if category := request.GET.get("category"):
        found = found.filter(category=category)
    rows = found.order_by(F("rating").desc(nulls_last=True), "id")[:PRODUCTS_LIMIT]
    fields = ("id", "name", "category", "price_cents", "stock", "rating", "review_count")
    return JsonResponse({"products": list(rows.values(*fields))})


def report(request: HttpRequest) -> JsonResponse:
    revenue = F("quantity") * F("unit_price_cents")
    by_category_region = Order.objects.values("product__category", "region").annotate(
        revenue=Sum(revenue), units=Sum("quantity"), orders=Count("id")
    )
    months: dict[str, list[int]] = defaultdict(lambda: [0] * 12)
    for category, day, value in Order.objects.values_list("product__category", "day").annotate(
        value=Sum(revenue)
    ):
        months[category][_month(day)] += value
    order_values: dict[str, list[int]] = defaultdict(list)
    for category, quantity, unit_price in Order.objects.values_list(
        "product__category", "quantity", "unit_price_cents"
    ):
        order_values[category].append(quantity * unit_price)
    categories = [
        {
            "category": category,
            "months": [round(cents / 100) for cents in months[category]],
            "best_month": MONTHS[months[category].index(max(months[category]))],
            "median_order": round(statistics.median(values) / 100, 2),
        }
        for category, values in sorted(order_values.items())
    ]
    regions: dict[str, dict[str, Any]] = defaultdict(dict)
    for row in by_category_region:
        regions[row["region"]][row["product__category"]] = {
            "revenue": round(row["revenue"] / 100),
            "units": row["units"],
            "orders": row["orders"],
        }
    return JsonResponse({"categories": categories, "regions": regions})


def product_page(request: HttpRequest, product_id: int) -> HttpResponse:
    product = get_object_or_404(Product, id=product_id)
    customers = Order.objects.filter(product_id=product_id).values("customer_id")
    bought_together = (
        Product.objects.filter(orders__customer_id__in=customers)
        .exclude(id=product_id)
        .annotate(customers=Count("orders__customer_id", distinct=True))
        .order_by("-customers", "id")[:5]
    )
    monthly = [0] * 12
    for day, value in (
        Order.objects.filter(product__category=product.category)
        .values_list("day")
        .annotate(value=Sum(F("quantity") * F("unit_price_cents")))
    ):
        monthly[_month(day)] += value
    top = max(monthly) or 1
    context = {
        "product": product,
        "price": f"{product.price_cents / 100:.2f}",
        "reviews": list(product.reviews.order_by("id")),
        "bought_together": list(bought_together),
        "months": [
            {"name": name, "euros": round(cents / 100), "bar": round(100 * cents / top)}
            for name, cents in zip(MONTHS, monthly, strict=True)
        ],
    }
    return render(request, "product.html", context)
