"""Which clusters the configuration names (clusters/sources.py): names as path segments,
--cluster entries and their errors, the default cluster, duplicate names, and fingerprints that
change with what a context connects with and nothing else."""

import pytest
import yaml

from dashboard_api.app import options
from dashboard_api.clusters import sources
from dashboard_api.kubeapi.config import ConfigError
from dashboard_api.serving.paths import split_path


def kubeconfig(path, contexts, current=None, servers=None, tokens=None, cas=None):
    """Writes a kubeconfig with one cluster and one user per context name."""
    servers, tokens, cas = servers or {}, tokens or {}, cas or {}
    doc = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c-" + n, "cluster": {
            "server": servers.get(n, "https://127.0.0.1:6443"),
            "certificate-authority-data": cas.get(n, "Q0EK")}} for n in contexts],
        "users": [{"name": "u-" + n, "user": {"token": tokens.get(n, "token-" + n)}}
                  for n in contexts],
        "contexts": [{"name": n, "context": {"cluster": "c-" + n, "user": "u-" + n}}
                     for n in contexts],
    }
    if current is not None:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def opts(*argv):
    return options.parse(list(argv))


def names(entries):
    return [e.name for e in entries]


# --- names --------------------------------------------------------------------------------

@pytest.mark.parametrize("given,expected", [
    ("prod", "prod"),
    ("kind-kind", "kind-kind"),
    ("user@cluster.example:8443", "user@cluster.example:8443"),
    ("arn:aws:eks:eu-west-1:123:cluster/prod", "arn:aws:eks:eu-west-1:123:cluster-prod"),
    ("a b?c#d%e", "a-b-c-d-e"),
    ("", "-"), (".", "-."), ("..", "-.."),
    ("é", "-"),
])
def test_path_name(given, expected):
    assert sources.path_name(given) == expected


def test_path_name_is_one_path_segment_of_bounded_length():
    name = sources.path_name("x/" * 200)
    assert len(name) == 100 and "/" not in name
    assert split_path("/clusters/%s/api/v1/pod" % name) == (name, "/api/v1/pod")


def test_split_path():
    assert split_path("/api/v1/pod") == (None, "/api/v1/pod")
    assert split_path("/clusters/a") == ("a", "/")
    assert split_path("/clusters/a/") == ("a", "/")
    assert split_path("/clusters/a/api/v1/pod") == ("a", "/api/v1/pod")
    assert split_path("/clustersx/a") == (None, "/clustersx/a")


# --- --cluster ------------------------------------------------------------------------------

def test_parse_cluster_flag():
    assert sources.parse_cluster_flag("prod=/k/prod.yaml") == ("prod", "/k/prod.yaml", None)
    assert sources.parse_cluster_flag("prod=/k/prod.yaml:admin@prod") == (
        "prod", "/k/prod.yaml", "admin@prod")
    # A context name may carry colons of its own (EKS): the first colon ends the path.
    assert sources.parse_cluster_flag("eks=/k/eks:arn:aws:eks:eu:1:cluster/x") == (
        "eks", "/k/eks", "arn:aws:eks:eu:1:cluster/x")


@pytest.mark.parametrize("text", ["prod", "=/k/prod.yaml", "prod=", "prod=:ctx", ""])
def test_cluster_flag_refused_as_a_configuration_error(text):
    # A ConfigError: the start-up logs it and exits 1 (a ValueError was a traceback).
    with pytest.raises(ConfigError, match="^--cluster %s: expected NAME=KUBECONFIG"
                                          r"\[:CONTEXT\]$" % text):
        sources.read(opts("--cluster", text))


def test_cluster_flags_are_repeatable(tmp_path):
    a = kubeconfig(tmp_path / "a", ["one", "two"], current="one")
    b = kubeconfig(tmp_path / "b", ["three"], current="three")
    entries, default = sources.read(opts("--cluster", "first=" + a,
                                         "--cluster", "second=%s:two" % a,
                                         "--cluster", "third=" + b))
    assert [(e.name, e.kubeconfig, e.context) for e in entries] == [
        ("first", a, "one"), ("second", a, "two"), ("third", b, "three")]
    assert default == "first"


def test_cluster_flag_without_current_context_or_unknown_context(tmp_path):
    a = kubeconfig(tmp_path / "a", ["one"])
    with pytest.raises(ConfigError, match=r"--cluster x: no context \(current\) in "):
        sources.read(opts("--cluster", "x=" + a))
    with pytest.raises(ConfigError, match="--cluster x: no context nope in "):
        sources.read(opts("--cluster", "x=%s:nope" % a))


def test_unreadable_kubeconfig(tmp_path):
    with pytest.raises(ConfigError, match="cannot load cluster configuration from"):
        sources.read(opts("--kubeconfig", str(tmp_path / "absent")))
    with pytest.raises(ConfigError, match="cannot load cluster configuration from"):
        sources.read(opts("--cluster", "x=%s" % (tmp_path / "absent")))


def test_cluster_names_are_path_segments(tmp_path):
    a = kubeconfig(tmp_path / "a", ["arn:aws:eks:eu:1:cluster/prod"],
                   current="arn:aws:eks:eu:1:cluster/prod")
    entries, default = sources.read(opts("--kubeconfig", a, "--cluster", "my team=" + a))
    assert names(entries) == ["arn:aws:eks:eu:1:cluster-prod", "my-team"]
    assert entries[0].context == "arn:aws:eks:eu:1:cluster/prod"  # the context keeps its name
    assert default == "arn:aws:eks:eu:1:cluster-prod"


# --- which clusters, which default ----------------------------------------------------------

def test_every_context_is_a_cluster_the_current_one_the_default(tmp_path):
    a = kubeconfig(tmp_path / "a", ["staging", "prod", "dev"], current="prod")
    entries, default = sources.read(opts("--kubeconfig", a))
    assert names(entries) == ["staging", "prod", "dev"]
    assert all(e.kubeconfig == a for e in entries)
    assert default == "prod"


def test_without_current_context_the_first_is_the_default(tmp_path):
    a = kubeconfig(tmp_path / "a", ["staging", "prod"])
    assert sources.read(opts("--kubeconfig", a))[1] == "staging"


def test_default_cluster_flag(tmp_path):
    a = kubeconfig(tmp_path / "a", ["staging", "prod"], current="prod")
    assert sources.read(opts("--kubeconfig", a, "--default-cluster", "staging"))[1] == "staging"
    # A --cluster entry may be the default too.
    assert sources.read(opts("--kubeconfig", a, "--cluster", "other=%s:prod" % a,
                             "--default-cluster", "other"))[1] == "other"


def test_default_cluster_by_its_context_name(tmp_path):
    eks = "arn:aws:eks:eu-west-1:123:cluster/prod"
    a = kubeconfig(tmp_path / "a", ["staging", eks], current="staging")
    for given in (eks, sources.path_name(eks)):
        assert sources.read(opts("--kubeconfig", a, "--default-cluster", given))[1] == \
            "arn:aws:eks:eu-west-1:123:cluster-prod"


def test_unknown_default_cluster_is_refused(tmp_path):
    a = kubeconfig(tmp_path / "a", ["staging", "prod"], current="prod")
    with pytest.raises(ConfigError, match=r"--default-cluster nope: no such cluster "
                                          r"\(staging, prod\)"):
        sources.read(opts("--kubeconfig", a, "--default-cluster", "nope"))


def test_kubeconfig_without_contexts_is_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "contexts": []}))
    with pytest.raises(ConfigError):
        sources.read(opts("--kubeconfig", str(empty)))


def test_flags_only_and_in_cluster(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    entries, default = sources.read(opts("--apiserver-host", "https://127.0.0.1:6443"))
    assert names(entries) == [sources.FLAGS_ONLY] and default == sources.FLAGS_ONLY
    assert entries[0].kubeconfig is None
    entries, default = sources.read(opts())
    assert names(entries) == [sources.IN_CLUSTER] and default == sources.IN_CLUSTER


def test_in_a_pod_cluster_flags_are_served_beside_the_pods_own(tmp_path, monkeypatch):
    a = kubeconfig(tmp_path / "a", ["prod"], current="prod")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert names(sources.read(opts("--cluster", "prod=" + a))[0]) == ["prod"]
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    entries, default = sources.read(opts("--cluster", "prod=" + a))
    assert names(entries) == [sources.IN_CLUSTER, "prod"] and default == sources.IN_CLUSTER
    assert sources.read(opts("--cluster", "prod=" + a, "--default-cluster", "prod"))[1] == "prod"
    # --kubeconfig names every cluster served, in a pod too (as before many clusters).
    assert names(sources.read(opts("--kubeconfig", a))[0]) == ["prod"]


def test_kubeconfig_list_as_in_kubeconfig_env(tmp_path):
    a = kubeconfig(tmp_path / "a", ["one"], current="one")
    b = kubeconfig(tmp_path / "b", ["two"], current="two")
    entries, default = sources.read(opts("--kubeconfig", "%s:%s" % (a, b)))
    # As kubectl merges: the first file's current-context wins; a missing file in a list is
    # skipped.
    assert names(entries) == ["one", "two"] and default == "one"
    entries, default = sources.read(opts("--kubeconfig", "%s:%s:%s" % (
        tmp_path / "absent", b, a)))
    assert names(entries) == ["two", "one"] and default == "two"


def test_a_file_that_is_no_kubeconfig_is_refused(tmp_path):
    (tmp_path / "list").write_text("- a\n- b\n")
    with pytest.raises(ConfigError,
                       match="cannot load cluster configuration from .*not a kubeconfig"):
        sources.read(opts("--kubeconfig", str(tmp_path / "list")))
    (tmp_path / "bad").write_text("contexts: [\n")
    with pytest.raises(ConfigError, match="cannot load cluster configuration from"):
        sources.read(opts("--kubeconfig", str(tmp_path / "bad")))


def test_duplicate_names_are_refused(tmp_path):
    a = kubeconfig(tmp_path / "a", ["prod"], current="prod")
    with pytest.raises(ConfigError, match="two clusters are named prod: name them apart"):
        sources.read(opts("--kubeconfig", a, "--cluster", "prod=" + a))
    # Two context names that become one path segment.
    b = kubeconfig(tmp_path / "b", ["team/a", "team a"], current="team/a")
    with pytest.raises(ConfigError, match="two clusters are named team-a"):
        sources.read(opts("--kubeconfig", b))


# --- fingerprints ---------------------------------------------------------------------------

def fingerprints(path):
    return {e.name: e.fingerprint for e in sources.read(opts("--kubeconfig", path))[0]}


def test_fingerprint_unchanged_when_another_context_is_added_or_current_changes(tmp_path):
    path = tmp_path / "k"
    before = fingerprints(kubeconfig(path, ["a", "b"], current="a"))
    after = fingerprints(kubeconfig(path, ["a", "b", "c"], current="c"))
    assert after["a"] == before["a"] and after["b"] == before["b"]
    assert len(set(after.values())) == 3
    assert fingerprints(kubeconfig(path, ["a", "b"], current="a")) == before  # same file again


@pytest.mark.parametrize("change", [
    dict(servers={"a": "https://10.0.0.1:6443"}),
    dict(cas={"a": "T1RIRVIK"}),
    dict(tokens={"a": "a-new-token"}),
])
def test_fingerprint_changes_with_server_ca_or_credentials(tmp_path, change):
    path = tmp_path / "k"
    before = fingerprints(kubeconfig(path, ["a", "b"], current="a"))
    after = fingerprints(kubeconfig(path, ["a", "b"], current="a", **change))
    assert after["a"] != before["a"]
    assert after["b"] == before["b"]


def test_fingerprint_keeps_no_secret(tmp_path):
    path = kubeconfig(tmp_path / "k", ["a"], current="a", tokens={"a": "s3cret-token"})
    entry = sources.read(opts("--kubeconfig", path))[0][0]
    assert "s3cret" not in entry.fingerprint and "s3cret" not in repr(entry)
    assert len(entry.fingerprint) == 64


def test_cluster_auth_modes(tmp_path):
    path = kubeconfig(tmp_path / "kc", ["prod/eu", "dev"], current="dev")
    options_ = opts("--kubeconfig", path, "--cluster-auth", "prod/eu=impersonate",
                    "--cluster-auth", "forward")
    entries, default = sources.read(options_)
    # A context's name as kubectl spells it names its path name; a bare mode: the default.
    assert sources.auth_modes(options_, entries, default) == {"prod-eu": "impersonate",
                                                              "dev": "forward"}
    assert sources.auth_modes(opts("--kubeconfig", path), entries, default) == {}


@pytest.mark.parametrize("flag, why", [("staging=impersonate", "no such cluster"),
                                       ("dev=trust", "forward or impersonate"),
                                       ("impersonated", "forward or impersonate")])
def test_cluster_auth_flag_refused(tmp_path, flag, why):
    path = kubeconfig(tmp_path / "kc", ["dev"], current="dev")
    options_ = opts("--kubeconfig", path, "--cluster-auth", flag)
    entries, default = sources.read(options_)
    with pytest.raises(ConfigError, match=why):
        sources.auth_modes(options_, entries, default)
