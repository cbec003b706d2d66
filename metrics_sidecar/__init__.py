"""Metrics sidecar: scrapes node and pod metrics and serves a short window of them."""
