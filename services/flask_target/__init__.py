"""Flask on gunicorn: sync worker processes, one request each at a time."""
