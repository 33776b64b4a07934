"""The Django shop example: served as WSGI (gunicorn, several workers making their database at
once) and as ASGI (uvicorn), it gives the same answers, and its paths do what its views say: the
report is the CPU path, the page renders a template over several queries, the list is light."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from labtester.launcher import RunningTarget
from tests.services.apps import configurations, serve_app
from tests.services.servertiming import Timing, parse

APPS = {"wsgi": "examples.django_shop.wsgi:application", "asgi": "examples.django_shop.asgi:application"}
PATHS = ["/report", "/products/7/page", "/products?category=lamps"]
REPEATS = 4


@pytest.fixture(scope="module")
def shops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, RunningTarget]]:
    """Both interfaces on one fresh database file, which no process has made yet: gunicorn's sync
    workers (sync-2x: two a core) start together and the first makes it."""
    database = tmp_path_factory.mktemp("django") / "shop.sqlite3"
    chosen = {"wsgi": "sync-2x", "asgi": "uvicorn"}
    started = {}
    try:
        for interface, app in APPS.items():
            (configuration,) = [c for c in configurations(interface) if c["name"] == chosen[interface]]
            started[interface] = serve_app(app, configuration, PATHS, DJANGO_SHOP_DB=str(database))
        yield started
    finally:
        for target in started.values():
            target.stop()


def answers(target: RunningTarget, path: str) -> tuple[int, str, Timing]:
    response = httpx.get(f"{target.url}{path}", timeout=60)
    timing = parse(response.headers.get("server-timing"))
    assert timing is not None
    return response.status_code, response.text, timing


@pytest.mark.parametrize("path", [*PATHS, "/products/999/page"])
def test_wsgi_and_asgi_answer_alike(shops: dict[str, RunningTarget], path: str) -> None:
    wsgi, asgi = (answers(shops[interface], path) for interface in APPS)
    assert wsgi[0] == asgi[0] == (404 if "999" in path else 200)
    if wsgi[0] == 200:
        assert wsgi[1] == asgi[1]


def test_the_page_renders_the_product_and_its_months(shops: dict[str, RunningTarget]) -> None:
    status, page, _ = answers(shops["wsgi"], "/products/7/page")
    listed = httpx.get(f"{shops['wsgi'].url}/products?category=sofas", timeout=60).json()["products"]
    (product,) = [p for p in listed if p["id"] == 7]  # the 50 sofas: every one of them
    assert status == 200 and page.startswith("<!doctype html>") and page.count("<tr><th>") == 12
    assert f"<h1>{product['name']}</h1>" in page and f"Reviews ({product['review_count']})" in page


def test_every_worker_serves_the_seeded_database(shops: dict[str, RunningTarget]) -> None:
    """Many requests at once reach every sync worker: each answers the same rows."""
    with ThreadPoolExecutor(16) as pool:
        found = list(pool.map(lambda _: answers(shops["wsgi"], "/products?category=lamps"), range(48)))
    assert {status for status, _, _ in found} == {200}
    assert len({text for _, text, _ in found}) == 1
    assert len({timing.pid for _, _, timing in found}) > 1
    products = httpx.Response(200, text=found[0][1]).json()["products"]
    assert len(products) == 50 and {p["category"] for p in products} == {"lamps"}


def test_the_report_is_the_cpu_path_the_list_the_lightest(shops: dict[str, RunningTarget]) -> None:
    # Under WSGI the middleware measures each view's CPU on its thread (under ASGI, Django runs the
    # plain `def` views in asgiref's thread, which it does not see yet). The least of a few
    # requests is each path's own: a worker's first pays one-time costs (templates, connections).
    report, page, listing = (
        min((answers(shops["wsgi"], path)[2] for _ in range(REPEATS)), key=lambda t: t.cpu_s)
        for path in PATHS
    )
    assert report.cpu_s > 3 * page.cpu_s > 3 * listing.cpu_s > 0
