"""kubeapi/identity.py: what the gateway keeps per caller is keyed by a digest of the token and
the impersonation lines, never the token itself."""

import copy
from types import SimpleNamespace

from dashboard_api.kubeapi.client import Handle
from dashboard_api.kubeapi.identity import identity_key


def test_key_hides_the_token_and_separates_identities():
    key = identity_key("my-token", {})
    assert "my-token" not in key and len(key) == 64
    assert key == identity_key("my-token", None)
    assert key != identity_key("my-token", {"Impersonate-User": "nobody"})
    assert identity_key("t", {"Impersonate-User": "a", "Impersonate-Group": "g"}) == \
        identity_key("t", {"impersonate-group": "g", "impersonate-user": "a"})
    assert identity_key("t", {"Impersonate-User": "ab"}) != \
        identity_key("ta", {"Impersonate-User": "b"})
    # every line counts: two groups are not one
    assert identity_key("t", (("Impersonate-Group", "a"), ("Impersonate-Group", "b"))) != \
        identity_key("t", (("Impersonate-Group", "a"),))


def test_a_handle_names_its_credentials_identity_once():
    handle = Handle(SimpleNamespace(), {"Authorization": "Bearer t"}, {"Impersonate-User": "u"})
    assert handle.identity == identity_key("t", {"Impersonate-User": "u"})
    assert copy.copy(handle).identity == handle.identity   # a request's copy (own_writes)
    other = Handle(SimpleNamespace(), {"Authorization": "Bearer u"}, {"Impersonate-User": "u"})
    assert other.identity != handle.identity
    service = Handle(SimpleNamespace(), None, {"Impersonate-User": "u"}, service=True)
    assert service.identity == identity_key("", {"Impersonate-User": "u"})
