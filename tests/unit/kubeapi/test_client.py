"""Calls to the API server name the product and its version."""

from types import SimpleNamespace

from dashboard_api.kubeapi.client import Handle
from dashboard_api.version import PRODUCT, VERSION


def test_user_agent_names_product_and_version():
    handle = Handle(SimpleNamespace(), {"Authorization": "Bearer t"}, {"Impersonate-User": "u"})
    headers = handle.headers()
    assert headers["User-Agent"] == "%s/%s" % (PRODUCT, VERSION)
    assert headers["Authorization"] == "Bearer t" and headers["Impersonate-User"] == "u"
