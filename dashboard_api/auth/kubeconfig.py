"""The bearer token carried by a kubeconfig's current context (sign-in with a kubeconfig file)."""

import yaml


class KubeconfigError(ValueError):
    pass


def _named(entries, name, what):
    for entry in entries or ():
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry.get(what) or {}
    raise KubeconfigError("the kubeconfig has no %s named %r" % (what, name))


def token_from_kubeconfig(content):
    """The token of the current context's user; KubeconfigError says why there is none.

    Only the content is read: file references (tokenFile, exec plugins, client certificates)
    would make the server read its own files or run commands, so they are refused.
    """
    try:
        doc = yaml.safe_load(content)
    except yaml.YAMLError:
        raise KubeconfigError("the kubeconfig is not valid YAML")
    if not isinstance(doc, dict):
        raise KubeconfigError("the kubeconfig is not a YAML mapping")
    contexts = doc.get("contexts")
    current = doc.get("current-context")
    if not current:
        if not isinstance(contexts, list) or len(contexts) != 1:
            raise KubeconfigError("the kubeconfig has no current-context")
        current = (contexts[0] or {}).get("name")
    context = _named(contexts, current, "context")
    user = _named(doc.get("users"), context.get("user"), "user")
    token = user.get("token")
    if not isinstance(token, str) or not token.strip():
        raise KubeconfigError("the kubeconfig's user %r has no token; only token sign-in is "
                              "supported" % context.get("user"))
    return token.strip()
