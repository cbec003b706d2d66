"""Mutating and validating webhook configurations (admissionregistration.k8s.io): which calls
the API server sends to which webhook, and what happens when it does not answer.

The CA bundle of a webhook's clientConfig (base64 of PEM certificates, often kilobytes) is left
out; everything else of a webhook is shown as the API server has it."""

from dashboard_api.summaries.common import object_meta, type_meta

_ITEM_FIELDS = ("name", "rules", "failurePolicy", "sideEffects")


def client_config(webhook):
    """``{"service": {"namespace", "name", "path", "port"}}`` or ``{"url": ...}``."""
    return {k: v for k, v in (webhook.get("clientConfig") or {}).items() if k != "caBundle"}


def _webhook_item(webhook):
    out = {field: webhook.get(field) for field in _ITEM_FIELDS}
    out["clientConfig"] = client_config(webhook)
    return out


def _webhook_detail(webhook):
    out = dict(webhook)
    out["clientConfig"] = client_config(webhook)
    return out


def _configuration(kind):
    def item(obj, rel):
        """The list item: each webhook's name, where it is called, its rules, failure policy
        and side effects."""
        return {"objectMeta": object_meta(obj), "typeMeta": type_meta(kind),
                "webhooks": [_webhook_item(w) for w in obj.get("webhooks") or ()]}

    def detail(obj, rel):
        """Every field of each webhook (selectors, match policy, timeout, review versions,
        reinvocation policy...), the CA bundle left out."""
        return {"objectMeta": object_meta(obj), "typeMeta": type_meta(kind),
                "webhooks": [_webhook_detail(w) for w in obj.get("webhooks") or ()]}
    return item, detail


mutating, mutating_detail = _configuration("mutatingwebhookconfiguration")
validating, validating_detail = _configuration("validatingwebhookconfiguration")
