"""Where the API server is and how to reach it, from in-cluster config, a kubeconfig or flags.

Two connection pools come out of it, both sized for the executor:

* the *user* pool carries no credentials at all. Each call adds the caller's bearer token. It must
  never present the service's client certificate: the API server authenticates a client
  certificate before a bearer token, so a user call would silently run as the service.
* the *service* pool carries the service's own credentials (certificate or token) and is used only
  where the specification allows: the start-up version check and reading the settings ConfigMap.

Every socket of both has TCP keepalive on (kubeapi/deadlines.py), so that a peer gone without a
word is noticed. Where the server is and the service's credentials come from
kubeapi/connection.py and kubeapi/kubeconfig.py.
"""

import ssl

from dashboard_api.kubeapi import connection
from dashboard_api.kubeapi import kubeconfig as kubeconfig_files
from dashboard_api.kubeapi.connection import ConfigError  # noqa: F401 (raised to callers)
from dashboard_api.version import PRODUCT, VERSION

USER_AGENT = "%s/%s" % (PRODUCT, VERSION)


class ClusterConfig:
    def __init__(self, base, pool_size, service_identity=True):
        self.host = base.host
        self.verify = bool(base.verify_ssl)
        self.ca_file = base.ssl_ca_cert
        self._base = base
        self.user_pool = connection.pool(base, pool_size, credentials=False)
        self.service_pool = connection.pool(base, pool_size) if service_identity else None

    @property
    def service_base(self):
        """The service identity's connection (watches build their own TLS context)."""
        return self._base

    def service_headers(self):
        """The service's own Authorization header (a token file re-read as it rotates)."""
        if self.service_pool is None:
            return {}
        value = self._base.authorization()
        return {"Authorization": value} if value else {}

    def ssl_context(self):
        """A client TLS context for user calls made outside urllib3 (WebSocket streams).

        It checks the certificate against the host of the server's URL: a kubeconfig's
        tls-server-name, which the urllib3 pools honour, is not applied to these streams."""
        if not self.host.startswith("https"):
            return None
        ctx = ssl.create_default_context(cafile=self.ca_file) if self.ca_file \
            else ssl.create_default_context()
        if not self.verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx


def load(options, kubeconfig=None, context=None, overrides=True):
    """Builds one cluster's configuration: from ``kubeconfig`` (its ``context``, else its
    current one), else the in-cluster service account unless --apiserver-host says where.
    With ``overrides`` (the default cluster), --apiserver-host, --apiserver-ca-bundle and
    --apiserver-skip-tls-verify apply on top."""
    host = options.apiserver_host if overrides else None
    if kubeconfig:
        cfg = kubeconfig_files.connection(kubeconfig, context)
    elif not host:
        try:
            cfg = connection.in_cluster()
        except ConfigError as exc:
            raise ConfigError("cannot load cluster configuration from the in-cluster service "
                              "account: %s" % exc) from exc
    else:
        cfg = connection.Connection(host, proxy=connection.environment_proxy(host))
    if overrides:
        if options.apiserver_host:
            cfg.host = options.apiserver_host.rstrip("/")
        if options.apiserver_ca_bundle:
            cfg.ssl_ca_cert = options.apiserver_ca_bundle
        if options.apiserver_skip_tls_verify:
            cfg.verify_ssl = False
    if not cfg.host:
        raise ConfigError("no API server address: give --apiserver-host or --kubeconfig")
    return ClusterConfig(cfg, pool_size=options.api_workers,
                         service_identity=not options.proxy)
