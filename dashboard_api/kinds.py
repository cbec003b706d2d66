"""The one declarative table of resource kinds: every read route is generated from it.

A row (``Kind``) says where the kind lives and how it looks on the wire:

  name          route segment and lower-case wire kind ("pod")
  group, plural, versions
                API group ("" = core), resource plural, and the versions understood, best first;
                discovery picks the first one the server serves (never hard-code one version)
  namespaced    namespaced kinds get /{name}/{namespace} list and /{name}/{namespace}/{obj} routes
  list_key      the array's key in the list envelope ("pods", "deployments", "items", ...)
  summary       pure ``summary(obj, rel) -> list item`` (``rel``: summaries.common.Related)
  list_needs    keys of reads.STANDARD the summaries read from ``rel`` ("pods", "events", ...),
                fetched in the list's namespaces; a forbidden one becomes an ``errors`` entry
  list_status   pure ``(raw, rel) -> ResourceStatus`` or None (no ``status`` block); it reads
                the objects and ``rel`` only, so the cache computes it without summaries
  status_facts  pure ``(obj) -> facts`` or None: what list_status needs of an object alone;
                the cache computes them once per change and passes ``facts=`` to list_status
  key_item      pure ``(obj) -> partial item`` holding what ``properties`` read (default: the
                whole summary without related data); the cache computes keys from it
  properties    dataselect properties (default: name, creationTimestamp, namespace)
  filterable    False for event lists (sort and page only)
  metrics       True when the list carries ``cumulativeMetrics`` (filled by DECORATORS)
  detail        pure ``detail(obj, rel) -> dict`` or None (no detail route); a detail that
                has an ``errors`` key gets the request's non-critical errors there
  detail_needs  pure ``(obj, rel) -> [reads.Need]``, asked again until nothing new is needed
  embeds        reads.Embed: sublists inlined in the detail (e.g. the node's podList)
  sublists      reads.Sublist: related routes /{name}/{ns}/{obj}/{suffix}
  keep          pure ``keep(obj) -> bool`` or None: objects it rejects are never listed (CRDs
                that serve no version)
  cached        True (the watch cache holds it), or OPT_IN: only when --watch-cache-opt-in
                names it (leases: they change with every node heartbeat, see
                tests/bench/bench_leases.py); else its lists pass through to the API server
  page_needs, finish
                per page item: ``page_needs(obj) -> [Need]``, then ``finish(item, obj, rel)``
                (node allocated resources are computed for the page only)

How to add a kind (one row plus a small module):
  1. write ``dashboard_api/summaries/<family>.py`` with pure functions ``item(obj, rel)`` and
     ``detail(obj, rel)`` building the reference's wire shape (use summaries.common.object_meta
     and type_meta; put ``"errors": []`` in the detail when it has an errors field), plus any
     Sublist objects of the kind (see summaries/events.py ``RESOURCE_EVENTS`` for the usual
     ``.../event`` route);
  2. add ``Kind(...)`` to ``TABLE`` below. The list, detail and sublist routes appear by
     themselves (handlers/resources.py); write tests in tests/resources/.
A kind with routes of a different shape adds a Sublist with ``respond`` (see pods.CONTAINERS).
A resource read only as related data (a pod's config maps) needs no row: use ``reads.Api``.
The objects of a CRD have no row: handlers/customresources.py builds their Kind per request
from the CRD (its ``/crd/{ns}/{crd}/...`` routes do not fit the table's shapes).
"""

from dashboard_api import dataselect
from dashboard_api.summaries.common import EMPTY
from dashboard_api.summaries import autoscaling, cluster, config, crds, cronjobs, events, \
    networking, pods, policy, rbac, services, storage, workloads
from dashboard_api.summaries import admission, coordination, csi, endpointslices, quotas, \
    scheduling


OPT_IN = "opt-in"   # Kind.cached: cached only when --watch-cache-opt-in names the kind


class Kind:
    def __init__(self, name, group, plural, namespaced, list_key, summary, versions=("v1",),
                 list_needs=(), list_status=None, properties=dataselect.COMMON,
                 filterable=True, metrics=False, detail=None, detail_needs=None, embeds=(),
                 sublists=(), page_needs=None, finish=None, keep=None, status_facts=None,
                 key_item=None, cached=True):
        self.name = name
        self.group = group
        self.plural = plural
        self.namespaced = namespaced
        self.list_key = list_key
        self.summary = summary
        self.versions = tuple(versions)
        self.list_needs = tuple(list_needs)
        self.list_status = list_status
        self.properties = properties
        self.filterable = filterable
        self.metrics = metrics
        self.detail = detail
        self.detail_needs = detail_needs or (lambda obj, rel: ())
        self.embeds = tuple(embeds)
        self.sublists = tuple(sublists)
        self.page_needs = page_needs
        self.finish = finish
        self.keep = keep
        self.status_facts = status_facts
        self.key_item = key_item or (lambda obj: summary(obj, EMPTY))
        self.cached = cached

    def sublist(self, suffix):
        for sub in self.sublists:
            if sub.suffix == suffix:
                return sub
        raise KeyError("%s has no sublist %s" % (self.name, suffix))

    def __repr__(self):
        return "Kind(%s)" % self.name


_EVENTS = events.RESOURCE_EVENTS

TABLE = [
    Kind("pod", "", "pods", True, "pods", pods.item, list_needs=("events",),
         list_status=pods.list_status, status_facts=pods.status_facts, key_item=pods.key_item, properties=pods.PROPERTIES, metrics=True,
         detail=pods.detail, detail_needs=pods.detail_needs,
         embeds=pods.EMBEDS, sublists=(pods.CONTAINERS, _EVENTS, pods.CLAIMS)),
    Kind("deployment", "apps", "deployments", True, "deployments", workloads.deployment,
         list_needs=("pods", "events", "replicasets"),
         list_status=workloads.deployment_list_status,
         metrics=True, detail=workloads.deployment_detail,
         detail_needs=workloads.deployment_detail_needs,
         sublists=(_EVENTS, workloads.OLD_REPLICA_SETS, workloads.NEW_REPLICA_SET)),
    Kind("replicaset", "apps", "replicasets", True, "replicaSets", workloads.replicaset,
         list_needs=("pods", "events"), list_status=workloads.list_status, metrics=True,
         detail=workloads.replicaset_detail, detail_needs=workloads.replicaset_detail_needs,
         sublists=(workloads.OWNED_PODS, workloads.SERVICES, _EVENTS)),
    Kind("replicationcontroller", "", "replicationcontrollers", True, "replicationControllers",
         workloads.replicationcontroller, list_needs=("pods", "events"),
         list_status=workloads.list_status, metrics=True,
         detail=workloads.replicationcontroller_detail, detail_needs=workloads.owned_pods_needs,
         sublists=(workloads.OWNED_PODS, workloads.SERVICES, _EVENTS)),
    Kind("daemonset", "apps", "daemonsets", True, "daemonSets", workloads.daemonset,
         list_needs=("pods", "events"), list_status=workloads.list_status, metrics=True,
         detail=workloads.daemonset_detail, detail_needs=workloads.owned_pods_needs,
         sublists=(workloads.OWNED_PODS, workloads.SERVICES, _EVENTS)),
    Kind("statefulset", "apps", "statefulsets", True, "statefulSets", workloads.statefulset,
         list_needs=("pods", "events"), list_status=workloads.list_status, metrics=True,
         detail=workloads.statefulset_detail, detail_needs=workloads.owned_pods_needs,
         sublists=(workloads.OWNED_PODS, _EVENTS)),
    Kind("job", "batch", "jobs", True, "jobs", workloads.job, list_needs=("pods", "events"),
         list_status=workloads.job_list_status, metrics=True, detail=workloads.job_detail,
         detail_needs=workloads.job_pods_needs, sublists=(workloads.JOB_PODS, _EVENTS)),
    Kind("cronjob", "batch", "cronjobs", True, "items", cronjobs.item,
         versions=("v1", "v1beta1"), list_status=cronjobs.list_status,
         detail=cronjobs.detail, sublists=(cronjobs.JOBS, _EVENTS)),
    Kind("namespace", "", "namespaces", False, "namespaces", cluster.namespace,
         detail=cluster.namespace_detail, detail_needs=cluster.namespace_detail_needs,
         sublists=(cluster.NAMESPACE_EVENTS,)),
    Kind("node", "", "nodes", False, "nodes", cluster.node, metrics=True,
         detail=cluster.node_detail, page_needs=cluster.node_pods_needs,
         finish=cluster.node_finish, detail_needs=cluster.node_detail_needs,
         embeds=cluster.NODE_EMBEDS, sublists=(cluster.NODE_PODS, cluster.NODE_EVENTS)),
    Kind("event", "", "events", True, "events", events.event, properties=events.PROPERTIES,
         filterable=False),
    # Services and networking, config and storage, autoscaling.
    Kind("service", "", "services", True, "services", services.item,
         properties=services.PROPERTIES, detail=services.detail,
         detail_needs=services.detail_needs,
         sublists=(_EVENTS, services.PODS, services.INGRESSES)),
    Kind("persistentvolumeclaim", "", "persistentvolumeclaims", True, "items", storage.claim,
         detail=storage.claim),
    Kind("horizontalpodautoscaler", "autoscaling", "horizontalpodautoscalers", True,
         "horizontalpodautoscalers", autoscaling.item, versions=("v2", "v2beta2", "v1"),
         detail=autoscaling.detail),
    # Networking, config and storage, access control and policy, custom resources.
    Kind("ingress", "networking.k8s.io", "ingresses", True, "items", networking.ingress,
         versions=("v1", "v1beta1"), detail=networking.ingress_detail, sublists=(_EVENTS,)),
    Kind("ingressclass", "networking.k8s.io", "ingressclasses", False, "items",
         networking.ingress_class, versions=("v1", "v1beta1"),
         detail=networking.ingress_class_detail),
    Kind("networkpolicy", "networking.k8s.io", "networkpolicies", True, "items",
         networking.network_policy, detail=networking.network_policy_detail),
    Kind("configmap", "", "configmaps", True, "items", config.config_map,
         detail=config.config_map_detail),
    Kind("secret", "", "secrets", True, "secrets", config.secret, detail=config.secret_detail),
    Kind("persistentvolume", "", "persistentvolumes", False, "items", storage.volume,
         properties=storage.VOLUME_PROPERTIES, detail=storage.volume_detail),
    Kind("storageclass", "storage.k8s.io", "storageclasses", False, "items",
         storage.storage_class, detail=storage.storage_class,
         sublists=(storage.CLASS_VOLUMES,)),
    Kind("role", "rbac.authorization.k8s.io", "roles", True, "items", rbac.role,
         detail=rbac.role_detail),
    Kind("rolebinding", "rbac.authorization.k8s.io", "rolebindings", True, "items",
         rbac.role_binding, detail=rbac.role_binding_detail),
    Kind("clusterrole", "rbac.authorization.k8s.io", "clusterroles", False, "items",
         rbac.cluster_role, detail=rbac.cluster_role_detail),
    Kind("clusterrolebinding", "rbac.authorization.k8s.io", "clusterrolebindings", False,
         "items", rbac.cluster_role_binding, detail=rbac.cluster_role_binding_detail),
    Kind("serviceaccount", "", "serviceaccounts", True, "items", rbac.service_account,
         detail=rbac.service_account_detail,
         sublists=(rbac.ACCOUNT_SECRETS, rbac.ACCOUNT_PULL_SECRETS)),
    Kind("poddisruptionbudget", "policy", "poddisruptionbudgets", True, "items", policy.budget,
         versions=("v1", "v1beta1"), detail=policy.budget_detail),
    # The CRD's detail route is in handlers/customresources.py: its objects' list needs a Kind
    # built from the CRD.
    Kind("crd", "apiextensions.k8s.io", "customresourcedefinitions", False, "items", crds.item,
         properties=crds.PROPERTIES, keep=crds.has_served_version),
    # Built-in kinds beyond the specification's: quotas and limits, endpoint slices, leases,
    # scheduling and runtime classes, CSI drivers, admission webhooks.
    Kind("resourcequota", "", "resourcequotas", True, "items", quotas.quota,
         detail=quotas.quota_detail),
    Kind("limitrange", "", "limitranges", True, "items", quotas.limit_range,
         detail=quotas.limit_range),
    Kind("endpointslice", "discovery.k8s.io", "endpointslices", True, "items",
         endpointslices.endpoint_slice, versions=("v1", "v1beta1"),
         properties=endpointslices.PROPERTIES, detail=endpointslices.endpoint_slice),
    Kind("lease", "coordination.k8s.io", "leases", True, "items", coordination.lease,
         versions=("v1", "v1beta1"), properties=coordination.PROPERTIES,
         detail=coordination.lease, cached=OPT_IN),
    Kind("priorityclass", "scheduling.k8s.io", "priorityclasses", False, "items",
         scheduling.priority_class, versions=("v1", "v1beta1"),
         detail=scheduling.priority_class),
    Kind("runtimeclass", "node.k8s.io", "runtimeclasses", False, "items",
         scheduling.runtime_class, versions=("v1", "v1beta1"),
         detail=scheduling.runtime_class_detail),
    Kind("csidriver", "storage.k8s.io", "csidrivers", False, "items", csi.driver,
         versions=("v1", "v1beta1"), detail=csi.driver_detail),
    Kind("mutatingwebhookconfiguration", "admissionregistration.k8s.io",
         "mutatingwebhookconfigurations", False, "items", admission.mutating,
         versions=("v1", "v1beta1"), detail=admission.mutating_detail),
    Kind("validatingwebhookconfiguration", "admissionregistration.k8s.io",
         "validatingwebhookconfigurations", False, "items", admission.validating,
         versions=("v1", "v1beta1"), detail=admission.validating_detail),
]

KINDS = {k.name: k for k in TABLE}


def get(name):
    return KINDS[name]
