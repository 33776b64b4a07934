"""The Django shop's paths."""

from __future__ import annotations

from django.urls import path

from examples.django_shop import views

urlpatterns = [
    path("products", views.products),
    path("products/<int:product_id>/page", views.product_page),
    path("report", views.report),
]
