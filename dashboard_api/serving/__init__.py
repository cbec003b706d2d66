"""The serving machinery: connections, body limits, bounded parsing, errors and parameters, the
Route type, the request log, telemetry, TLS, sealed values and the process's lifecycle.

Nothing here knows Kubernetes, and nothing here imports another package of dashboard_api: every
other layer builds on it (README.md, "Layout").
"""
