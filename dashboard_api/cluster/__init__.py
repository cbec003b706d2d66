"""Everything that talks to the Kubernetes API server lives in this package."""

from dashboard_api.cluster.client import Cluster, Handle, Response

__all__ = ["Cluster", "Handle", "Response"]
