"""The product's name and version, reported by /config and in the user agent."""

PRODUCT = "dashboard-api"
VERSION = "0.1.0"
