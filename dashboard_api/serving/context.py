"""What every handler may reach: the options and the long-lived services of the process."""


class Context:
    """``routes`` are the routes of the running mode; ``settings`` the settings store;
    ``sidecar`` the metrics sidecar client (None when metrics are disabled); ``locales`` the
    web UI's [(id, name)]; ``source`` where list requests read objects
    (cache.passthrough.ChunkedList: the caller's LIST calls; cache.source.CacheSource with the
    watch cache); ``pipeline`` the list pipeline over it (listing.Pipeline); ``cache`` the
    watch cache (None when it is off); ``terminals`` the terminal sessions
    (terminal.sessions.Sessions); ``lifecycle`` says whether the process is ready or going away
    (lifecycle.Lifecycle); ``oidc`` the OpenID Connect sign-in (auth.oidc.SignIn, None
    without --oidc-issuer-url)."""

    def __init__(self, options, cluster, telemetry, csrf=None, settings=None, sidecar=None,
                 routes=(), locales=(), source=None, cache=None, terminals=None,
                 lifecycle=None, pipeline=None, oidc=None):
        self.options = options
        self.cluster = cluster
        self.telemetry = telemetry
        self.csrf = csrf
        self.settings = settings
        self.sidecar = sidecar
        self.routes = list(routes)
        self.locales = list(locales)
        self.source = source
        self.cache = cache
        self.terminals = terminals
        self.lifecycle = lifecycle
        self.pipeline = pipeline
        self.oidc = oidc
