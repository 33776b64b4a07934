"""The Django shop as WSGI: `LAB_APP=examples.django_shop.wsgi:application` (gunicorn imports it in
each worker, after the fork)."""

from __future__ import annotations

import os

import django
from django.core.wsgi import get_wsgi_application

from examples.django_shop.database import ensure_database

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_shop.settings")
django.setup()
ensure_database()
application = get_wsgi_application()
