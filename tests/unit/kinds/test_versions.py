"""Versions by discovery: nothing outside the 1.20 overlay names a group/version that only
Kubernetes 1.20 serves; every kind of the kinds table tries its GA version first; the table of
versions in docs/kinds.md agrees with the kinds table and with the newest release's schemas."""

import os
import re

from dashboard_api.kinds import table as kinds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BASE = os.path.join(ROOT, "conf", "kubernetes")
# Served by Kubernetes 1.20 and by no current release (removed in 1.25 and 1.26).
ONLY_1_20 = ("batch/v1beta1", "autoscaling/v2beta2", "policy/v1beta1",
             "discovery.k8s.io/v1beta1")
ROW = re.compile(r"^\| `([a-z]+)` \| (\w+) \| `([a-z0-9./]+)` \| `([a-z0-9./]+)` \|$", re.M)


def group_version(group, version):
    return "%s/%s" % (group, version) if group else version


def readme_rows():
    """{route kind: (Kind, on 1.20, on current releases)} of the table of versions
    (docs/kinds.md, "Kubernetes versions: found by discovery")."""
    with open(os.path.join(ROOT, "docs", "kinds.md")) as f:
        text = f.read()
    return {m.group(1): m.group(2, 3, 4) for m in ROW.finditer(text)}


def test_the_base_names_no_version_of_1_20_only():
    found = {}
    for directory, _, files in os.walk(BASE):
        for name in files:
            with open(os.path.join(directory, name)) as f:
                text = f.read()
            found.update({name: v for v in ONLY_1_20 if v in text})
    assert found == {}
    # The check looks where it should: the overlay holds one.
    with open(os.path.join(ROOT, "conf", "overlays", "k8s-1.20", "pdb-v1beta1.yaml")) as f:
        assert "policy/v1beta1" in f.read()


def test_every_kind_tries_a_current_version_first():
    first = {k.name: group_version(k.group, k.versions[0]) for k in kinds.TABLE}
    assert not {name: gv for name, gv in first.items() if gv in ONLY_1_20}
    # The kinds that 1.20 serves at a beta version still read it, after the GA one.
    for name, beta in (("cronjob", "v1beta1"), ("horizontalpodautoscaler", "v2beta2"),
                       ("poddisruptionbudget", "v1beta1")):
        versions = kinds.get(name).versions
        assert beta in versions[1:], (name, versions)


def test_the_readme_table_is_the_kinds_table():
    rows = readme_rows()
    assert len(rows) >= len(kinds.TABLE)
    missing = [k.name for k in kinds.TABLE if k.name not in rows]
    assert missing == [], "kinds missing from docs/kinds.md's table of versions"
    for kind in kinds.TABLE:
        _, old, current = rows[kind.name]
        assert current == group_version(kind.group, kind.versions[0]), kind.name
        assert old in [group_version(kind.group, v) for v in kind.versions], kind.name
    for name, (_, old, current) in rows.items():
        assert current not in ONLY_1_20, name
        if old != current:
            assert old in ONLY_1_20, name   # only 1.20's removed betas differ


def test_the_current_column_is_served_by_current_releases():
    from kubernetes_validate import utils

    def served(api_version, kind, release):
        try:
            utils.validate({"apiVersion": api_version, "kind": kind,
                            "metadata": {"name": "x"}}, release)
        except utils.SchemaNotFoundError:
            return False
        except utils.ValidationError:
            pass   # a schema exists: the release serves it (a minimal object may be invalid)
        return True

    oldest, newest = utils.all_versions()[0], utils.latest_version()
    for name, (kind, old, current) in readme_rows().items():
        for release in (oldest, newest):
            assert served(current, kind, release), (name, current, release)
        if old != current:   # removed by 1.26 (autoscaling/v2beta2 lasted longest)
            assert not served(old, kind, newest), (name, old, newest)
