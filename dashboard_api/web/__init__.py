"""The web side of the gateway: the pages' paths, cookies and headers, the home page's and the
sign-in's files, the cluster picker's page, the web UI's settings, locales and upstream shapes.
No handler lives here (handlers/ serves these)."""
