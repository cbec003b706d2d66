"""The bearer token carried by a kubeconfig's current context (sign-in with a kubeconfig file)."""

from dashboard_api.serving import bounded


class KubeconfigError(ValueError):
    pass


def _mapping(value, what):
    """``value`` when it is a mapping (absent counts as empty); KubeconfigError otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise KubeconfigError("the kubeconfig's %s must be a mapping" % what)
    return value


def _list(value, what):
    if value is None:
        return []
    if not isinstance(value, list):
        raise KubeconfigError("the kubeconfig's %s must be a list" % what)
    for entry in value:
        if not isinstance(entry, dict):
            raise KubeconfigError("every entry of the kubeconfig's %s must be a mapping" % what)
    return value


def _named(entries, name, what):
    """The ``what`` mapping of the entry called ``name`` in a list of {name, <what>} entries."""
    for entry in _list(entries, what + "s"):
        if entry.get("name") == name:
            return _mapping(entry.get(what), "%s %r" % (what, name))
    raise KubeconfigError("the kubeconfig has no %s named %r" % (what, name))


def token_from_kubeconfig(content):
    """The token of the current context's user; KubeconfigError says why there is none."""
    credential = credential_from_kubeconfig(content)
    if not isinstance(credential, str):
        raise KubeconfigError("the kubeconfig's user has no token; only token sign-in is "
                              "supported")
    return credential


def credential_from_kubeconfig(content):
    """The current context's user's token (a str), or the config of its ``auth-provider:
    oidc`` (a dict of strings: id-token, refresh-token, idp-issuer-url, client-id,
    client-secret; auth/oidc/kubeconfig.py signs it in); KubeconfigError says why neither.

    CPU-bound on large input (the login route's body is at most 256 KiB): handlers run it in
    bounded.run. Only the content is read: file references (tokenFile, exec plugins, client
    certificates) would make the server read its own files or run commands, so they are
    refused.
    """
    try:
        doc = bounded.yaml_document(content, bounded.KUBECONFIG)
    except bounded.InputError as exc:
        if str(exc).startswith("not valid"):
            raise KubeconfigError("the kubeconfig is not valid YAML")
        raise KubeconfigError("the kubeconfig is refused: %s" % exc)
    if not isinstance(doc, dict):
        raise KubeconfigError("the kubeconfig is not a YAML mapping")
    contexts = _list(doc.get("contexts"), "contexts")
    current = doc.get("current-context")
    if not current:
        if len(contexts) != 1:
            raise KubeconfigError("the kubeconfig has no current-context")
        current = contexts[0].get("name")
    context = _named(contexts, current, "context")
    user = _named(doc.get("users"), context.get("user"), "user")
    token = user.get("token")
    provider = _mapping(user.get("auth-provider"), "auth-provider")
    if (not isinstance(token, str) or not token.strip()) and provider.get("name") == "oidc":
        config = _mapping(provider.get("config"), "auth-provider config")
        return {k: v for k, v in config.items() if isinstance(k, str) and isinstance(v, str)}
    if not isinstance(token, str) or not token.strip():
        raise KubeconfigError("the kubeconfig's user %r has no token and no oidc "
                              "auth-provider; only those sign in" % context.get("user"))
    return token.strip()
