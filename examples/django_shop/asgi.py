"""The Django shop as ASGI: `LAB_APP=examples.django_shop.asgi:application`. Its views are plain
`def`: Django runs each in asgiref's thread (sync_to_async), as it does every view that is not
`async def`."""

from __future__ import annotations

import os

import django
from django.core.asgi import get_asgi_application

from examples.django_shop.database import ensure_database

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_shop.settings")
django.setup()
ensure_database()
application = get_asgi_application()
