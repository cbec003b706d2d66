"""Where an API server is and what a process shows it: one ``Connection`` a cluster, and the
urllib3 pools made from it.

The plain cases (a kubeconfig's server, CA, client certificate and token; the in-cluster
service account) are read here (kubeapi/kubeconfig.py, ``in_cluster``) without the
``kubernetes`` package: importing it costs a gateway ~19 MiB and a quarter of a second for
loaders most clusters never use (issue #41). A kubeconfig whose user runs a command (``exec``),
names an ``auth-provider`` or a user name and password is still loaded by the package
(``of_library``), imported then, and only then.

A token read from a file (the in-cluster service account's, a kubeconfig's ``tokenFile``) is
read again once a minute: projected service-account tokens are rotated in place.
"""

import os
import ssl
import time
import urllib.parse
import urllib.request

import urllib3

from dashboard_api.kubeapi.deadlines import pool_socket_options

TOKEN_REREAD = 60.0   # seconds between two reads of a token file, as client-go does

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class ConfigError(Exception):
    pass


class Connection:
    """An API server's address and how to trust it (``host``, ``verify_ssl``, ``ssl_ca_cert``,
    ``tls_server_name``, ``proxy``) and the process's own credentials for it (``cert_file``
    and ``key_file``, ``authorization()``). Paths, not certificates' bytes: the TLS contexts
    of streams and watches load them too."""

    def __init__(self, host, verify_ssl=True, ssl_ca_cert=None, cert_file=None, key_file=None,
                 tls_server_name=None, proxy=None, token=None, token_file=None,
                 authorize=None, clock=time.monotonic):
        self.host = host.rstrip("/")
        self.verify_ssl = verify_ssl
        self.ssl_ca_cert = ssl_ca_cert
        self.cert_file = cert_file
        self.key_file = key_file
        self.tls_server_name = tls_server_name
        self.proxy = proxy
        self._token = token
        self._token_file = token_file
        self._authorize = authorize   # the kubernetes package's refreshing header, when it loaded
        self._clock = clock
        self._read_at = None
        if token_file and token is None:
            self._token = read_token(token_file)
            self._read_at = clock()

    def authorization(self):
        """The ``Authorization`` value of the process's own identity, or None."""
        if self._authorize is not None:
            return self._authorize()
        if self._token_file and self._clock() - self._read_at >= TOKEN_REREAD:
            self._read_at = self._clock()
            try:
                self._token = read_token(self._token_file)
            except ConfigError:
                pass   # keep the token read last: the API server says if it is no longer good
        return "Bearer " + self._token if self._token else None

    def __repr__(self):   # never the token
        return "Connection(%r)" % self.host


def read_token(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("cannot read the token file %s: %s" % (path, exc)) from exc


def in_cluster(environ=os.environ, directory=SERVICE_ACCOUNT):
    """The pod's own cluster: the service's address from the environment, the service
    account's CA and token (re-read as it rotates)."""
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError("not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                          "are not set")
    if ":" in host:   # an IPv6 address
        host = "[%s]" % host
    ca = os.path.join(directory, "ca.crt")
    if not os.path.isfile(ca):
        raise ConfigError("the service account's CA %s is missing" % ca)
    token = os.path.join(directory, "token")
    return Connection("https://%s:%s" % (host, port), ssl_ca_cert=ca, token_file=token,
                      proxy=environment_proxy("https://%s:%s" % (host, port)))


def environment_proxy(host):
    """The proxy the environment names for ``host`` (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), as
    the kubernetes package and kubectl use it, or None."""
    parts = urllib.parse.urlsplit(host)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass_environment(parts.hostname or "", proxies):
        return None
    return proxy


def of_library(kubeconfig, context):
    """A kubeconfig the plain reader leaves to the ``kubernetes`` package (a command or an
    auth provider gives its user's credentials): loaded by it, its header refreshed by its
    hook."""
    import kubernetes.client   # noqa: PLC0415 (only these kubeconfigs pay for it)
    import kubernetes.config   # noqa: PLC0415
    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=kubeconfig, context=context,
                                       client_configuration=cfg)
    if "alias" in _parameters(cfg.get_api_key_with_prefix):
        # kubernetes 36 keeps the token as api_key["BearerToken"], read with alias= for the
        # old key; 35 (the last for Python 3.9) as api_key["authorization"], without alias=.
        def authorize():
            return cfg.get_api_key_with_prefix("BearerToken", alias="authorization")
    else:
        def authorize():
            return cfg.get_api_key_with_prefix("authorization")
    proxy = getattr(cfg, "proxy", None)
    if proxy and _bypassed(cfg.host, getattr(cfg, "no_proxy", None)):
        proxy = None
    return Connection(cfg.host or "", verify_ssl=bool(cfg.verify_ssl), ssl_ca_cert=cfg.ssl_ca_cert,
                      cert_file=cfg.cert_file, key_file=cfg.key_file,
                      tls_server_name=getattr(cfg, "tls_server_name", None), proxy=proxy,
                      authorize=authorize)


def _parameters(fn):
    import inspect   # noqa: PLC0415
    return inspect.signature(fn).parameters


def _bypassed(host, no_proxy):
    if not no_proxy:
        return False
    hostname = urllib.parse.urlsplit(host).hostname or ""
    return bool(urllib.request.proxy_bypass_environment(hostname, {"no": no_proxy}))


def pool(connection, size, credentials=True):
    """A urllib3 pool to the API server of ``connection``, ``size`` connections kept, TCP
    keepalive on each. With ``credentials`` False it never presents the client certificate
    (the user pool: the API server authenticates a certificate before a bearer token)."""
    args = {"maxsize": size, "socket_options": pool_socket_options(),
            "cert_reqs": ssl.CERT_REQUIRED if connection.verify_ssl else ssl.CERT_NONE,
            "ca_certs": connection.ssl_ca_cert}
    if credentials and connection.cert_file:
        args["cert_file"] = connection.cert_file
        args["key_file"] = connection.key_file
    if connection.tls_server_name:
        args["server_hostname"] = connection.tls_server_name
    if connection.proxy:
        if connection.proxy.startswith("socks"):
            from urllib3.contrib.socks import SOCKSProxyManager   # noqa: PLC0415 (PySocks)
            return SOCKSProxyManager(connection.proxy, **args)
        return urllib3.ProxyManager(connection.proxy, **args)
    return urllib3.PoolManager(**args)
