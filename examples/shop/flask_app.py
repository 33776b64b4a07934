"""The shop on Flask (WSGI): `LAB_APP=examples.shop.flask_app:app`.

Plain blocking code, as a Flask team writes it: the database and the HTTP calls block the worker
(a sync worker's process, a gthread worker's thread; under gevent, patched, they yield).
"""

from __future__ import annotations

from typing import Any

import httpx
from flask import Flask, Response, abort, jsonify, render_template, request

from examples.shop import catalog, downstream
from examples.shop.pages import PRODUCTS_LIMIT, TEMPLATES
from examples.shop.report import category_trend, sales_report

app = Flask(__name__, template_folder=str(TEMPLATES))
# One pooled client per worker process (the app is imported in each), made once: making one loads
# the CA certificates, which is no request's work.
_client = (
    httpx.Client(base_url=_url, timeout=downstream.TIMEOUT_S) if (_url := downstream.base_url()) else None
)


def _product_or_404(product_id: int | None) -> dict[str, Any]:
    found = catalog.product(product_id) if product_id is not None else None
    if found is None:
        abort(404)
    return found


@app.get("/products")
def list_products() -> Response:
    """Mostly the database: one aggregate query, serialized as JSON."""
    return jsonify(catalog.products(request.args.get("category"), PRODUCTS_LIMIT))


@app.get("/products/<int:product_id>")
def show_product(product_id: int) -> Response:
    return jsonify(_product_or_404(product_id))


@app.get("/products/<int:product_id>/page")
def product_page(product_id: int) -> Response | tuple[Response, int] | str:
    """Mixed: a call to the inventory service, queries, the category's trend, a rendered page."""
    found = _product_or_404(product_id)
    client = _client
    if client is None:
        return jsonify(downstream.UNSET), 503
    client.get(downstream.stock_path()).raise_for_status()
    return render_template(
        "product.html",
        product=found,
        in_stock=found["stock"] > 0,
        bought_together=catalog.bought_together(product_id),
        trend=category_trend(found["category"]),
    )


@app.get("/report")
def report() -> str:
    """Mostly CPU: the year's order lines summed up in Python, rendered as an HTML table."""
    return render_template("report.html", report=sales_report())


@app.get("/checkout")
def checkout() -> Response | tuple[Response, int]:
    """Mostly waiting: the payment provider takes its time."""
    found = _product_or_404(request.args.get("product", type=int))
    client = _client
    if client is None:
        return jsonify(downstream.UNSET), 503
    client.get(downstream.payment_path()).raise_for_status()
    return jsonify({"product": found["id"], "amount_cents": found["price_cents"], "payment": "accepted"})
