"""The shop as a Django project (ORM over SQLite, Django templates), served as WSGI and as ASGI."""
