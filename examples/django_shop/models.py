"""The shop's tables as Django models: products, their reviews, a year of order lines."""

from __future__ import annotations

from django.db import models


class Product(models.Model):
    name = models.CharField(max_length=80)
    category = models.CharField(max_length=20, db_index=True)
    price_cents = models.IntegerField()
    stock = models.IntegerField()


class Review(models.Model):
    product = models.ForeignKey(Product, related_name="reviews", on_delete=models.CASCADE)
    stars = models.IntegerField()
    text = models.CharField(max_length=200)


class Order(models.Model):
    customer_id = models.IntegerField(db_index=True)
    product = models.ForeignKey(Product, related_name="orders", on_delete=models.CASCADE)
    quantity = models.IntegerField()
    unit_price_cents = models.IntegerField()
    day = models.IntegerField()  # of the year, 0..364
    region = models.CharField(max_length=10)
