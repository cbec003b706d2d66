"""Kubeconfig sign-in and the token's own account name (for /me)."""

import base64
import json

import pytest

from dashboard_api.auth.identity import service_account_name
from dashboard_api.auth.kubeconfig import KubeconfigError, token_from_kubeconfig

KUBECONFIG = """
apiVersion: v1
kind: Config
current-context: b
contexts:
- name: a
  context: {cluster: c, user: ua}
- name: b
  context: {cluster: c, user: ub}
users:
- name: ua
  user: {token: token-a}
- name: ub
  user: {token: " token-b "}
"""


def jwt(payload):
    part = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return "eyJhbGciOiJSUzI1NiJ9.%s.c2ln" % part


def test_token_of_the_current_context():
    assert token_from_kubeconfig(KUBECONFIG) == "token-b"
    single = KUBECONFIG.replace("current-context: b\n", "").replace(
        "- name: a\n  context: {cluster: c, user: ua}\n", "")
    assert token_from_kubeconfig(single) == "token-b"


@pytest.mark.parametrize("content, message", [
    ("a: [", "not valid YAML"),
    ("- 1", "mapping"),
    (KUBECONFIG.replace("current-context: b", "current-context: z"), "no context named 'z'"),
    (KUBECONFIG.replace('{token: " token-b "}', "{client-certificate: /etc/c}"), "no token"),
    (KUBECONFIG.replace('{token: " token-b "}', "{tokenFile: /etc/passwd}"), "no token"),
    (KUBECONFIG.replace("current-context: b\n", ""), "no current-context"),
    ("[" * 5000 + "]" * 5000, "nested deeper than 40"),  # refused before it is parsed
])
def test_unusable_kubeconfigs(content, message):
    with pytest.raises(KubeconfigError, match=message):
        token_from_kubeconfig(content)


# Wrong types where the kubeconfig format has mappings and lists: refused with a clear reason.
MALFORMED = [
    ("contexts: 5\ncurrent-context: x", "contexts must be a list"),
    ("contexts: [5]", "every entry of the kubeconfig's contexts must be a mapping"),
    ("contexts: [{name: x, context: 5}]\ncurrent-context: x", "context 'x' must be a mapping"),
    ("contexts: [{name: x, context: {user: u}}]\nusers: [{name: u, user: 5}]",
     "user 'u' must be a mapping"),
    ("contexts: [{name: x, context: {user: u}}]\nusers: 5", "users must be a list"),
    ("contexts: [{name: x, context: {user: u}}]\nusers: [[u]]",
     "every entry of the kubeconfig's users must be a mapping"),
]


@pytest.mark.parametrize("content, message", MALFORMED)
def test_wrongly_typed_kubeconfigs(content, message):
    with pytest.raises(KubeconfigError, match=message):
        token_from_kubeconfig(content)


def test_service_account_names():
    bound = jwt({"kubernetes.io": {"namespace": "n", "serviceaccount": {"name": "sa", "uid": "u"}}})
    legacy = jwt({"kubernetes.io/serviceaccount/service-account.name": "old"})
    assert service_account_name(bound) == "sa"
    assert service_account_name(legacy) == "old"
    assert service_account_name(jwt({"sub": "x"})) is None
    assert service_account_name("static-token") is None
    assert service_account_name("a.!!!.c") is None
