"""Workloads (deployments, replica sets, replication controllers, daemon sets, stateful sets,
jobs): their list items (items.py), their list status (status.py), and their details and
related routes (details.py)."""
