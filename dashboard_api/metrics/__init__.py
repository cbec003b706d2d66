"""The metrics integration: the sidecar client (metric queries build on it)."""
