"""The shop on FastAPI (ASGI): `LAB_APP=examples.shop.fastapi_app:app`.

As a FastAPI team writes it: the HTTP calls are awaited (httpx's async client); the database and
the report are blocking code in plain `def` endpoints, which FastAPI runs in its thread pool; the
page awaits its call and renders on the event loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates

from examples.shop import catalog, downstream
from examples.shop.pages import PRODUCTS_LIMIT, TEMPLATES
from examples.shop.report import category_trend, sales_report


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    url = downstream.base_url()
    app.state.client = httpx.AsyncClient(base_url=url, timeout=downstream.TIMEOUT_S) if url else None
    try:
        yield
    finally:
        if app.state.client is not None:
            await app.state.client.aclose()


app = FastAPI(title="Shop", lifespan=lifespan)
templates = Jinja2Templates(directory=TEMPLATES)


def _product_or_404(product_id: int) -> dict[str, Any]:
    found = catalog.product(product_id)
    if found is None:
        raise HTTPException(404, "Not Found")
    return found


@app.get("/products")
def list_products(category: str | None = None) -> list[dict[str, Any]]:
    """Mostly the database: one aggregate query, serialized as JSON."""
    return catalog.products(category, PRODUCTS_LIMIT)


@app.get("/products/{product_id}")
def show_product(product_id: int) -> dict[str, Any]:
    return _product_or_404(product_id)


@app.get("/products/{product_id}/page", response_class=HTMLResponse)
async def product_page(request: Request, product_id: int) -> Response:
    """Mixed: a call to the inventory service, queries, the category's trend, a rendered page."""
    found = _product_or_404(product_id)
    client: httpx.AsyncClient | None = request.app.state.client
    if client is None:
        return JSONResponse(downstream.UNSET, 503)
    (await client.get(downstream.stock_path())).raise_for_status()
    context = {
        "product": found,
        "in_stock": found["stock"] > 0,
        "bought_together": catalog.bought_together(product_id),
        "trend": category_trend(found["category"]),
    }
    return templates.TemplateResponse(request, "product.html", context)


@app.get("/report", response_class=HTMLResponse)
def report(request: Request) -> Response:
    """Mostly CPU: the year's order lines summed up in Python, rendered as an HTML table."""
    return templates.TemplateResponse(request, "report.html", {"report": sales_report()})


@app.get("/checkout")
async def checkout(request: Request, product: int) -> Response:
    """Mostly waiting: the payment provider takes its time."""
    found = _product_or_404(product)
    client: httpx.AsyncClient | None = request.app.state.client
    if client is None:
        return JSONResponse(downstream.UNSET, 503)
    (await client.get(downstream.payment_path())).raise_for_status()
    return JSONResponse({"product": found["id"], "amount_cents": found["price_cents"], "payment": "accepted"})
