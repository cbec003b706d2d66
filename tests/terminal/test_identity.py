"""The exec runs as exactly the identity its pre-check allowed: every impersonation line kept,
in order, through the sealed shell id (against the real API server's RBAC).

The impersonated user may exec only through one group, named FIRST among two Impersonate-Group
lines: the set may exec, the last group alone may not. A shell id that kept only the last line
of a repeated header would be issued (the check saw both groups) and then fail at the exec.
"""

import json
import secrets

import urllib3

from tests.terminal.conftest import CONTAINER
from tests.terminal.jsclient import sockjs_url

RBAC = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/"


def impersonating(token, user, groups):
    headers = urllib3.HTTPHeaderDict({"Authorization": "Bearer " + token,
                                      "Impersonate-User": user})
    for group in groups:
        headers.add("Impersonate-Group", group)
    return headers


def shell_call(gateway, namespace, headers):
    response = gateway.http.request(
        "GET", "%s/api/v1/pod/%s/web/shell/%s" % (gateway.url, namespace, CONTAINER),
        headers=headers, preload_content=True)
    return response.status, response.data


def test_the_exec_keeps_every_impersonation_line(js, gateway, cluster, admin_token,
                                                  shell_pods):
    tag = secrets.token_hex(3)
    user, allowed, other = "jane-" + tag, "shell-users-" + tag, "others-" + tag
    status, body = cluster.request("POST", RBAC % shell_pods + "roles", {
        "metadata": {"name": "exec-" + tag},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                  # The exec WebSocket is a GET: 1.20 authorizes it as "get" on pods/exec.
                  {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create", "get"]}]})
    assert status == 201, body
    status, body = cluster.request("POST", RBAC % shell_pods + "rolebindings", {
        "metadata": {"name": "exec-" + tag},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "exec-" + tag},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                      "name": allowed}]})
    assert status == 201, body
    both = impersonating(admin_token, user, [allowed, other])
    issued = cluster.wait_for(lambda: (lambda r: r if r[0] == 200 else None)(
        shell_call(gateway, shell_pods, both)), timeout=30, what="the group's exec right")
    # The last line alone has no right: the API server's own 403 names the user.
    status, body = shell_call(gateway, shell_pods, impersonating(admin_token, user, [other]))
    assert status == 403 and 'User "%s" cannot' % user in json.loads(body)["message"], body
    session_id = json.loads(issued[1])["id"]
    conn = js.open("t", sockjs_url(gateway, session_id), bind=session_id)
    js.stdin("t", "echo as-$((40+2))-$USER\r")
    js.wait_output("t", "as-42")
    assert conn.closed is None
    js.stdin("t", "exit\r")
    assert js.wait_closed("t") == (1, "Process exited")
