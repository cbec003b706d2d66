"""A node simulator standing in for kubelets: nodes, pod lifecycle, logs and exec over HTTPS."""
