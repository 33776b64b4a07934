"""The shop's data: an SQLite database built in memory at import, from a fixed seed (the same
rows in every process and every run), and the queries both versions of the app make.

Each thread (each greenlet under gevent) opens its own connection to the one shared in-memory
database; a module-level connection keeps it alive.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from typing import Any

CATEGORIES = ("lamps", "chairs", "tables", "rugs", "shelves", "desks", "beds", "sofas")
REGIONS = ("north", "south", "east", "west")
PRODUCTS = 400
CUSTOMERS = 3_000
ORDERS = 40_000
REVIEWS = 4_000
_DATABASE = "file:examples-shop?mode=memory&cache=shared"
_WORDS = [
    "sturdy",
    "cosy",
    "bright",
    "elegant",
    "compact",
    "wobbly",
    "lovely",
    "solid",
    "cheap",
    "great",
    "tiny",
    "heavy",
    "soft",
]

SCHEMA = """
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price_cents INTEGER, stock INTEGER);
CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER, stars INTEGER, text TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER, quantity INTEGER,
                     unit_price_cents INTEGER, day INTEGER, region TEXT);
CREATE INDEX reviews_by_product ON reviews (product_id);
CREATE INDEX orders_by_product ON orders (product_id);
CREATE INDEX orders_by_customer ON orders (customer_id);
"""


def _fill(connection: sqlite3.Connection) -> None:
    rng = random.Random(21)
    products = [
        (
            i,
            f"{rng.choice(_WORDS).title()} {category[:-1]} {i}",
            category,
            rng.randrange(900, 90_000),
            rng.randrange(0, 60),
        )
        for i, category in ((i, CATEGORIES[i % len(CATEGORIES)]) for i in range(1, PRODUCTS + 1))
    ]
    reviews = [
        (i, rng.randrange(1, PRODUCTS + 1), rng.randint(1, 5), " ".join(rng.sample(_WORDS, 4)))
        for i in range(1, REVIEWS + 1)
    ]
    prices = {product[0]: product[3] for product in products}
    orders = []
    for i in range(1, ORDERS + 1):
        product = rng.randrange(1, PRODUCTS + 1)
        discount = rng.choice((100, 100, 100, 90, 80))
        orders.append(
            (
                i,
                rng.randrange(CUSTOMERS),
                product,
                rng.randint(1, 4),
                prices[product] * discount // 100,
                rng.randrange(365),
                rng.choice(REGIONS),
            )
        )
    connection.executescript(SCHEMA)
    connection.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?)", products)
    connection.executemany("INSERT INTO reviews VALUES (?, ?, ?, ?)", reviews)
    connection.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", orders)
    connection.commit()


_keeper = sqlite3.connect(_DATABASE, uri=True, check_same_thread=False)
_fill(_keeper)
_local = threading.local()


def connection() -> sqlite3.Connection:
    """This thread's connection to the shop's database."""
    found: sqlite3.Connection | None = getattr(_local, "connection", None)
    if found is None:
        found = sqlite3.connect(_DATABASE, uri=True, check_same_thread=False)
        found.row_factory = sqlite3.Row
        _local.connection = found
    return found


def products(category: str | None, limit: int) -> list[dict[str, Any]]:
    """Products (of a category), best rated first, with their rating."""
    rows = connection().execute(
        """SELECT p.id, p.name, p.category, p.price_cents, p.stock,
                  ROUND(AVG(r.stars), 2) AS rating, COUNT(r.id) AS reviews
           FROM products p LEFT JOIN reviews r ON r.product_id = p.id
           WHERE ?1 IS NULL OR p.category = ?1
           GROUP BY p.id ORDER BY rating DESC, p.id LIMIT ?2""",
        (category, limit),
    )
    return [dict(row) for row in rows]


def product(product_id: int) -> dict[str, Any] | None:
    """One product with its reviews; None if there is none with that id."""
    row = connection().execute("SELECT * FROM products WHERE id = ?", (product_id,)).fetchone()
    if row is None:
        return None
    reviews = connection().execute(
        "SELECT stars, text FROM reviews WHERE product_id = ? ORDER BY id", (product_id,)
    )
    return {**dict(row), "reviews": [dict(review) for review in reviews]}


def bought_together(product_id: int, limit: int = 5) -> list[dict[str, Any]]:
    """What the customers who bought this product bought most besides it."""
    rows = connection().execute(
        """SELECT p.id, p.name, p.price_cents, COUNT(*) AS customers
           FROM orders mine JOIN orders other ON other.customer_id = mine.customer_id
           JOIN products p ON p.id = other.product_id
           WHERE mine.product_id = ?1 AND other.product_id != ?1
           GROUP BY p.id ORDER BY customers DESC, p.id LIMIT ?2""",
        (product_id, limit),
    )
    return [dict(row) for row in rows]


def order_lines(category: str | None = None) -> list[tuple[str, str, int, int, int]]:
    """Every order line (of a category): category, region, day, quantity, unit price (cents)."""
    return (
        connection()
        .execute(
            """SELECT p.category, o.region, o.day, o.quantity, o.unit_price_cents
           FROM orders o JOIN products p ON p.id = o.product_id
           WHERE ?1 IS NULL OR p.category = ?1""",
            (category,),
        )
        .fetchall()
    )
