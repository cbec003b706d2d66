"""Where the API server is and how to reach it, from in-cluster config, a kubeconfig or flags.

Two connection pools come out of it, both sized for the executor:

* the *user* pool carries no credentials at all. Each call adds the caller's bearer token. It must
  never present the service's client certificate: the API server authenticates a client
  certificate before a bearer token, so a user call would silently run as the service.
* the *service* pool carries the service's own credentials (certificate or token) and is used only
  where the specification allows: the start-up version check and reading the settings ConfigMap.

Every socket of both has TCP keepalive on (kubeapi/deadlines.py), so that a peer gone without a
word is noticed.
"""

import copy
import inspect
import ssl

import kubernetes.client
import kubernetes.config

from dashboard_api.kubeapi.deadlines import pool_socket_options
from dashboard_api.version import PRODUCT, VERSION

USER_AGENT = "%s/%s" % (PRODUCT, VERSION)


class ConfigError(Exception):
    pass


# kubernetes 36 keeps a kubeconfig's token as api_key["BearerToken"], read with alias= for the
# old key; 35, the last release for Python 3.9, keeps it as api_key["authorization"] and has no
# alias=.
_HAS_ALIAS = "alias" in inspect.signature(
    kubernetes.client.Configuration.get_api_key_with_prefix).parameters


def bearer_token(configuration):
    """The Authorization value of a kubernetes client configuration (refreshed by its hook when
    the loader set one), or None: on every kubernetes release setup.py allows."""
    if _HAS_ALIAS:
        return configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
    return configuration.get_api_key_with_prefix("authorization")


class ClusterConfig:
    def __init__(self, base, pool_size, service_identity=True):
        self.host = base.host.rstrip("/")
        self.verify = bool(base.verify_ssl)
        self.ca_file = base.ssl_ca_cert
        self._base = base
        self.user_pool = _pool(_without_credentials(base), pool_size)
        self.service_pool = _pool(base, pool_size) if service_identity else None

    @property
    def service_base(self):
        """The service identity's configuration (watches build their own TLS context)."""
        return self._base

    def service_headers(self):
        """The service's own Authorization header, refreshed when the loader supports it."""
        if self.service_pool is None:
            return {}
        value = bearer_token(self._base)
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


def _without_credentials(base):
    cfg = copy.copy(base)
    cfg.api_key = {}
    cfg.api_key_prefix = {}
    cfg.refresh_api_key_hook = None
    cfg.cert_file = None
    cfg.key_file = None
    cfg.username = None
    cfg.password = None
    return cfg


def _pool(cfg, size):
    cfg = copy.copy(cfg)
    cfg.connection_pool_maxsize = size
    cfg.socket_options = pool_socket_options()   # TCP keepalive on every socket
    client = kubernetes.client.ApiClient(cfg)
    client.user_agent = USER_AGENT
    return client.rest_client.pool_manager


def load(options, kubeconfig=None, context=None, overrides=True):
    """Builds one cluster's configuration: from ``kubeconfig`` (its ``context``, else its
    current one), else the in-cluster service account unless --apiserver-host says where.
    With ``overrides`` (the default cluster), --apiserver-host, --apiserver-ca-bundle and
    --apiserver-skip-tls-verify apply on top."""
    cfg = kubernetes.client.Configuration()
    host = options.apiserver_host if overrides else None
    try:
        if kubeconfig:
            kubernetes.config.load_kube_config(config_file=kubeconfig, context=context,
                                               client_configuration=cfg)
        elif not host:
            kubernetes.config.load_incluster_config(client_configuration=cfg)
    except Exception as exc:  # the loaders raise several unrelated types
        where = kubeconfig or "the in-cluster service account"
        raise ConfigError("cannot load cluster configuration from %s: %s" % (where, exc)) from exc
    if overrides:
        if options.apiserver_host:
            cfg.host = options.apiserver_host
        if options.apiserver_ca_bundle:
            cfg.ssl_ca_cert = options.apiserver_ca_bundle
        if options.apiserver_skip_tls_verify:
            cfg.verify_ssl = False
    if not cfg.host:
        raise ConfigError("no API server address: give --apiserver-host or --kubeconfig")
    return ClusterConfig(cfg, pool_size=options.api_workers,
                         service_identity=not options.proxy)
