"""Sandboxes that run untrusted programs; they know nothing about rewards."""
