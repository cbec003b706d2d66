"""HTTP handlers. Only this package and terminal/ speak HTTP."""
