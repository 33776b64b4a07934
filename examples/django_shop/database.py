"""Where the Django shop's SQLite database lives, and its making: once per machine, whichever
process comes first.

gunicorn imports the app in each worker after the fork (and uvicorn in each of its workers), so
several processes start at once: the first to take the lock file builds the tables and seeds them
from a fixed seed (the same rows in every run), then marks the database done; the others wait on
the lock and find it done. A build that died half-way leaves no mark, and the next one starts over.
No connection is left open after the build, so none crosses a later fork. The file is under the
temporary directory (`DJANGO_SHOP_DB` moves it), which a read-only container still writes.
"""

from __future__ import annotations

import fcntl
import os
import random
import tempfile
import threading
from pathlib import Path

SEED_VERSION = 1  # a change to the rows below changes the file's name: never an old database
CATEGORIES = ("lamps", "chairs", "tables", "rugs", "shelves", "desks", "beds", "sofas")
REGIONS = ("north", "south", "east", "west")
PRODUCTS, CUSTOMERS, ORDERS, REVIEWS = 400, 3_000, 40_000, 4_000
_WORDS = ("sturdy", "cosy", "bright", "elegant", "compact", "wobbly", "lovely", "solid", "cheap", "great")
_DONE = "django_shop_seeded"


def database_path() -> Path:
    default = Path(tempfile.gettempdir()) / f"concurrency-lab-django-shop-{SEED_VERSION}.sqlite3"
    return Path(os.environ.get("DJANGO_SHOP_DB", default))


def _seeded() -> bool:
    from django.db import connection

    return _DONE in connection.introspection.table_names()


def _seed() -> None:
    from django.db import connection, transaction

    from examples.django_shop.models import Order, Product, Review

    rng = random.Random(21)
    products = [
        Product(
            id=i,
            name=f"{rng.choice(_WORDS).title()} {CATEGORIES[i % len(CATEGORIES)][:-1]} {i}",
            category=CATEGORIES[i % len(CATEGORIES)],
            price_cents=rng.randrange(900, 90_000),
            stock=rng.randrange(0, 60),
        )
        for i in range(1, PRODUCTS + 1)
    ]
    prices = {product.id: product.price_cents for product in products}
    reviews = [
        Review(
            product_id=rng.randrange(1, PRODUCTS + 1),
            stars=rng.randint(1, 5),
            text=" ".join(rng.sample(_WORDS, 4)),
        )
        for _ in range(REVIEWS)
    ]
    orders = []
    for _ in range(ORDERS):
        product = rng.randrange(1, PRODUCTS + 1)
        orders.append(
            Order(
                customer_id=rng.randrange(CUSTOMERS),
                product_id=product,
                quantity=rng.randint(1, 4),
                unit_price_cents=prices[product] * rng.choice((100, 100, 100, 90, 80)) // 100,
                day=rng.randrange(365),
                region=rng.choice(REGIONS),
            )
        )
    with connection.schema_editor() as editor:  # its own transaction (SQLite's foreign keys)
        for model in (Product, Review, Order):
            editor.create_model(model)
    with transaction.atomic():
        Product.objects.bulk_create(products, batch_size=500)
        Review.objects.bulk_create(reviews, batch_size=500)
        Order.objects.bulk_create(orders, batch_size=500)
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE {_DONE} (version INTEGER)")


def ensure_database() -> None:
    """The seeded database, made here if no other process made it (django.setup() done). On a
    thread of its own: uvicorn calls the app's factory on its event loop, where Django refuses the
    ORM's blocking calls."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            _ensure()
        except BaseException as error:  # raised again on the caller's thread
            failed.append(error)

    worker = threading.Thread(target=run, name="django-shop-database")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def _ensure() -> None:
    from django.db import connections

    path = database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not _seeded():
                connections.close_all()
                path.unlink(missing_ok=True)  # a build that died half-way
                _seed()
        finally:
            connections.close_all()
            fcntl.flock(lock, fcntl.LOCK_UN)
