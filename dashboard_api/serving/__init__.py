"""The serving machinery: connections, body limits, bounded parsing, the route table, the
application, the request log, telemetry, TLS and the process's lifecycle.

Nothing here knows Kubernetes; what the dashboard knows about clusters and their objects lives
beside this package (cluster/, cache/, spec/, summaries/, handlers/).
"""
