"""Everything that talks to a Kubernetes API server: the client and its deadlines, rate limits
and executor, discovery, and the watches. The only package that opens a connection to one."""
