"""Roles, role bindings (namespaced and cluster-wide) and service accounts (reference §5.3,
§5.4), with a service account's secrets and image pull secrets."""

from dashboard_api.query.reads import Need, Sublist, scope_of
from dashboard_api.summaries.common import object_meta, type_meta


def _plain(kind):
    return lambda obj, rel: {"objectMeta": object_meta(obj), "typeMeta": type_meta(kind)}


role = _plain("role")
cluster_role = _plain("clusterrole")
role_binding = _plain("rolebinding")
cluster_role_binding = _plain("clusterrolebinding")
service_account = _plain("serviceaccount")


def _role_detail(kind):
    def detail(obj, rel):
        return {"objectMeta": object_meta(obj), "typeMeta": type_meta(kind),
                "rules": obj.get("rules") or [], "errors": []}
    return detail


def _binding_detail(kind):
    def detail(obj, rel):
        out = {"objectMeta": object_meta(obj), "typeMeta": type_meta(kind),
               "roleRef": obj.get("roleRef") or {}, "errors": []}
        if obj.get("subjects"):
            out["subjects"] = obj["subjects"]
        return out
    return detail


role_detail = _role_detail("role")
cluster_role_detail = _role_detail("clusterrole")
role_binding_detail = _binding_detail("rolebinding")
cluster_role_binding_detail = _binding_detail("clusterrolebinding")


def service_account_detail(obj, rel):
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("serviceaccount"), "errors": []}


def _named_secrets(field):
    """The ``.../secret`` or ``.../imagepullsecret`` route: the namespace's secrets named in the
    service account's ``field`` (nothing is read when it names none)."""
    def wanted(obj):
        return {ref.get("name") for ref in obj.get(field) or ()}

    return Sublist(
        "secret" if field == "secrets" else "imagepullsecret", "secret",
        lambda obj: [Need("secrets", "secret", scope_of(obj), critical=True)]
        if wanted(obj) else [],
        pick=lambda obj, rel, arg: [s for s in rel["secrets"]
                                    if (s.get("metadata") or {}).get("name") in wanted(obj)])


ACCOUNT_SECRETS = _named_secrets("secrets")
ACCOUNT_PULL_SECRETS = _named_secrets("imagePullSecrets")
