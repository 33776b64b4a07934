"""The Django shop's settings: one app (this package), its SQLite database (database.py says where
and how it is made), its templates. Nothing secret: an example that serves only 127.0.0.1 or a lab
pod."""

from __future__ import annotations

from pathlib import Path

from examples.django_shop.database import database_path

SECRET_KEY = "concurrency-lab-example-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = ["examples.django_shop"]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "examples.django_shop.urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(database_path())}}
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [str(Path(__file__).parent / "templates")],
    }
]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
