"""HTTP/JSON gateway in front of a Kubernetes API server for the Dashboard web UI."""
