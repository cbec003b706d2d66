"""Every flag of the specification with its default; upstream aliases; flags from a file."""

from dashboard_api.app import options

SPEC_DEFAULTS = {
    "bind_address": "0.0.0.0", "port": 8443, "insecure_bind_address": None,
    "insecure_port": 8080, "metrics_provider": "sidecar", "sidecar_host": None,
    "metric_client_check_period": 30.0, "enable_openapi": False, "disable_csrf": False,
    "apiserver_host": None, "kubeconfig": None, "apiserver_skip_tls_verify": False,
    "apiserver_ca_bundle": None, "proxy": False, "cache_enabled": False,
    "tls_cert_file": None, "tls_key_file": None, "auto_generate_certificates": False,
    "default_cert_dir": "/certs",
}


def test_spec_defaults():
    parsed = vars(options.parse([]))
    assert {k: parsed[k] for k in SPEC_DEFAULTS} == SPEC_DEFAULTS


def test_boolean_forms_and_aliases():
    o = options.parse(["--proxy", "--cache-enabled=true", "--openapi-enabled",
                       "--disable-csrf-protection=false", "--apiserver-skip-tls-verify", "yes"])
    assert o.proxy and o.cache_enabled and o.enable_openapi and not o.disable_csrf
    assert o.apiserver_skip_tls_verify
    assert options.parse(["--act-as-proxy"]).proxy


def test_durations():
    o = options.parse(["--metric-client-check-period", "1m", "--csrf-token-ttl", "500ms"])
    assert o.metric_client_check_period == 60 and o.csrf_token_ttl == 0.5


def test_flags_from_a_file(tmp_path):
    conf = tmp_path / "dashboard-api.conf"
    conf.write_text("# comment\n\n--port=9443\n--mode=api\n--system-banner=Hello world\n")
    o = options.parse(["@" + str(conf), "--insecure-port", "9080"])
    assert (o.port, o.mode, o.system_banner, o.insecure_port) == (9443, "api", "Hello world", 9080)


def test_the_example_configuration_parses():
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    o = options.parse(["@" + os.path.join(root, "conf", "dashboard-api.conf")])
    assert o.auto_generate_certificates and o.mode == "dashboard" and o.port == 8443
