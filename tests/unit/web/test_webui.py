"""The upstream web UI's shapes (--web-ui-compat), as pure functions."""

import json

from dashboard_api.logs.details import ReadPlan, log_details
from dashboard_api.logs.lines import parse_lines
from dashboard_api.logs.selection import Selection
from dashboard_api.serving.errors import ApiError
from dashboard_api.web import webui


def test_a_401_is_plain_text_on_api_routes_and_a_status_error_on_sign_in():
    error = ApiError(401, "Unauthorized")
    assert webui.error_reply(error, "api") == (webui.TEXT, "MSG_LOGIN_UNAUTHORIZED_ERROR")
    for component in ("auth", "web"):
        ctype, body = webui.error_reply(error, component)
        assert ctype == webui.JSON
        assert json.loads(body)["ErrStatus"] == {
            "metadata": {}, "status": "Failure", "message": "MSG_LOGIN_UNAUTHORIZED_ERROR",
            "reason": "Unauthorized", "code": 401}
    assert error.message == "Unauthorized"  # the error itself is left alone


def test_other_errors_keep_the_specification_fields_and_add_err_status():
    error = ApiError(403, 'pods is forbidden: User "x" cannot list', details={"kind": "pods"})
    ctype, body = webui.error_reply(error, "api")
    assert ctype == webui.JSON
    body = json.loads(body)
    assert {k: body[k] for k in error.body()} == error.body()
    assert body["ErrStatus"] == dict(error.body(), metadata={})


def test_log_lines_as_objects_or_strings():
    lines = parse_lines("2024-01-01T00:00:01Z one\n2024-01-01T00:00:02Z two\nno stamp\n")
    plan = ReadPlan.for_position("end")
    args = ("p", "c", lines, False, plan, Selection.last_lines())
    assert log_details(*args, False, line_objects=True)["logs"] == [
        {"timestamp": "2024-01-01T00:00:01Z", "content": "one"},
        {"timestamp": "2024-01-01T00:00:02Z", "content": "two"},
        {"timestamp": "0", "content": "no stamp"}]
    assert log_details(*args, True, line_objects=True)["logs"][0]["content"] == "one"
    assert log_details(*args, True)["logs"] == [
        "2024-01-01T00:00:01Z one", "2024-01-01T00:00:02Z two", "no stamp"]


def test_the_switch_is_off_by_default():
    from dashboard_api.app import options
    assert options.parse([]).web_ui_compat is False
    assert options.parse(["--web-ui-compat"]).web_ui_compat is True
    assert options.parse(["--web-ui-compat=false"]).web_ui_compat is False
