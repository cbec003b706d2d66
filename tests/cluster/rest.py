"""A small REST client for the local apiserver: urllib3 with an explicit CA bundle
(environment variables such as REQUESTS_CA_BUNDLE play no part)."""
import json
from urllib.parse import urlencode

import urllib3


class Rest:
    def __init__(self, base_url, ca_file, default_token):
        self.base_url = base_url
        self._default_token = default_token
        self._pool = urllib3.PoolManager(
            cert_reqs="CERT_REQUIRED", ca_certs=ca_file, maxsize=8, retries=False)

    def request(self, method, path, body=None, token=None, params=None, raw=False,
                content_type=None, timeout=30.0):
        """Returns (status, body): decoded JSON, or bytes when `raw` or not JSON."""
        url = self.base_url + path
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params, doseq=True)
        headers = {"Authorization": "Bearer " + (token or self._default_token),
                   "Accept": "application/json"}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            default_type = ("application/merge-patch+json" if method.upper() == "PATCH"
                            else "application/json")
            headers["Content-Type"] = content_type or default_type
        resp = self._pool.request(method.upper(), url, body=data, headers=headers,
                                  timeout=urllib3.Timeout(connect=5.0, read=timeout))
        if raw:
            return resp.status, resp.data
        try:
            return resp.status, json.loads(resp.data)
        except ValueError:
            return resp.status, resp.data

    def close(self):
        self._pool.clear()
