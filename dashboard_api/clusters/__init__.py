"""Many clusters behind one gateway (issue #28): every route of one cluster is served under
``/clusters/{name}/`` (serving/paths.py), the default cluster's also at the root.

``sources`` says which clusters are configured, ``context`` holds what belongs to one cluster,
``registry`` keeps them (started on first use, let go when idle, following the kubeconfig files).
"""
