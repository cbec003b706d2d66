"""The table of resource kinds: one ``Kind`` (kinds/kind.py) per kind, everything the project
knows about it.

Every read route, the watch cache's stores (projection, indexes), the list pipeline and the
OpenAPI document are generated from these declarations. How to declare a kind: the docstring of
dashboard_api/kinds/kind.py. A resource read only as related data (a pod's config maps) needs
no spec: use ``reads.Api``. The objects of a CRD get theirs from the CRD (``Kind.of_crd``,
handlers/customresources.py).
"""

from dashboard_api.kinds import joins, members
from dashboard_api.kinds.kind import OPT_IN, Kind
from dashboard_api.kinds.projection import Digest, Each, but, only
from dashboard_api.query.search import Facets, of_object, of_related
from dashboard_api.summaries import (admission, autoscaling, cluster, config, coordination, crds,
                                     cronjobs, csi, endpointslices, events, networking, pods,
                                     policy, quotas, rbac, scheduling, services, storage)
from dashboard_api.summaries.workloads import (details as workload_details, items as workloads,
                                               status as workload_status)

# --- what the cache keeps (kinds/projection.py) ------------------------------------------------

_CONTAINER = only("name", "image", "resources", "restartPolicy")
# A container's state as pod statuses read it (summaries/podstatus.py): which state, and the
# reason, exit code or signal of a waiting or terminated one, not its times or messages.
_STATE = only(waiting=only("reason"), running=only(),
              terminated=only("reason", "exitCode", "signal"))
_CONTAINER_STATUS = only("name", "ready", "restartCount", "started", state=_STATE)
# A running pod: what pod items, node allocation and log sources read (the pod detail reads the
# whole pod from the API server).
POD = but(
    spec=only("nodeName", "overhead", "serviceAccountName", "priority",
              containers=Each(_CONTAINER), initContainers=Each(_CONTAINER),
              ephemeralContainers=Each(_CONTAINER),
              volumes=Each(where="persistentVolumeClaim")),
    status=only("phase", "reason", conditions=Each(only("type", "status", "reason")),
                initContainerStatuses=Each(_CONTAINER_STATUS),
                containerStatuses=Each(_CONTAINER_STATUS)))
# A workload's pod template: its containers' names and images, what a list item shows of it (the
# summaries' ``containerImages``, ``initContainerImages``); the detail routes and the log
# sources read the whole workload from the API server. A replica set also keeps a fingerprint
# of its template (``spec.templateDigest``): a deployment's new replica set is the one whose
# template is the deployment's (workloads.new_replica_set). Whole templates were ~13 KB of
# each cached replica set, and a cluster keeps ten of them per deployment (issue #30).
# Of a workload's spec, the items read its replicas (a job: completions and parallelism), not
# its selector or strategy.
_IMAGES_OF = Each(only("name", "image"))
_TEMPLATE = only(spec=only(containers=_IMAGES_OF, initContainers=_IMAGES_OF))
_WORKLOAD_SPEC = ("replicas", "completions", "parallelism")
TEMPLATED = but(spec=only(*_WORKLOAD_SPEC, template=_TEMPLATE))
REPLICA_SET = but(spec=only(*_WORKLOAD_SPEC, template=_TEMPLATE,
                            templateDigest=Digest("template", workloads.template_digest)))
CRONJOB = but(spec=but(jobTemplate=but(spec=but(template=_TEMPLATE))))
# A node: what its list item reads (its Ready condition, allocatable and capacity for the
# allocated resources, nodeInfo); not the images the kubelet reports (the largest part of a
# node, 40-60 of them), its addresses, heartbeat times and messages, which only the detail
# shows (read from the API server).
NODE = but(status=only("allocatable", "capacity", "nodeInfo",
                       conditions=Each(only("type", "status"))))
# An event: what the event list and the warnings read, and the field selectors match; not
# the reporting controller's names, its series, the involved object's version, nor the event's
# own kind and apiVersion (a LIST's items do not carry them either): 10 fields, a dict of 272
# bytes instead of 464, for 200,000 events.
EVENT = but("kind", "apiVersion", "reportingComponent", "reportingInstance", "action",
            "related", "series", involvedObject=but("apiVersion", "resourceVersion"))
# An endpoint slice's list item shows every endpoint, but of its target only the kind, name
# and namespace (not its uid).
ENDPOINT_SLICE = but(endpoints=Each(but(targetRef=only("kind", "name", "namespace"))))
NO_DATA = but("data", "binaryData")
# Webhook configurations without their CA bundles (kilobytes of base64 no summary shows).
NO_CA_BUNDLES = but(webhooks=Each(but(clientConfig=but("caBundle"))))

# --- wire fields shared by several kinds (the schema of /apidocs.json) ------------------------

_IMAGES = {"containerImages": "array", "initContainerImages": "array"}
_POD_INFO = dict(_IMAGES, podInfo="object")
_EVENTS = events.RESOURCE_EVENTS
_CRONJOB = {"schedule": "string", "suspend": "boolean", "active": "integer",
            "lastSchedule": "string", "containerImages": "array"}
_HPA = {"scaleTargetRef": "object", "minReplicas": "integer", "maxReplicas": "integer",
        "currentCPUUtilizationPercentage": "integer", "targetCPUUtilizationPercentage": "integer"}
_NODE = {"ready": "string", "allocatedResources": "object", "nodeInfo": "object"}
_PV = {"capacity": "object", "accessModes": "array", "reclaimPolicy": "string",
       "storageClass": "string", "mountOptions": "array", "status": "string", "claim": "string",
       "reason": "string"}
_PVC = {"status": "string", "volume": "string", "capacity": "object", "accessModes": "array",
        "storageClass": "string"}
_PDB = {"minAvailable": None, "maxUnavailable": None, "unhealthyPodEvictionPolicy": "string",
        "currentHealthy": "integer", "desiredHealthy": "integer", "disruptionsAllowed": "integer",
        "expectedPods": "integer", "labelSelector": "object"}
_SERVICE = {"internalEndpoint": "object", "externalEndpoints": "array", "selector": "object",
            "type": "string", "clusterIP": "string"}
_BINDING = {"roleRef": "object", "subjects": "array"}
_STORAGE_CLASS = {"provisioner": "string", "parameters": "object"}
_QUOTA = {"scopes": "array", "statusList": "object"}
_SLICE = {"addressType": "string", "serviceName": "string", "ports": "array",
          "endpoints": "array"}
_LEASE = {"holderIdentity": "string", "leaseDurationSeconds": "integer",
          "acquireTime": "string", "renewTime": "string", "leaseTransitions": "integer"}
_PRIORITY = {"value": "integer", "globalDefault": "boolean", "preemptionPolicy": "string",
             "description": "string"}
_CSI = {"attachRequired": "boolean", "podInfoOnMount": "boolean",
        "volumeLifecycleModes": "array", "storageCapacity": "boolean", "fsGroupPolicy": "string"}
_WEBHOOKS = {"webhooks": "array"}

# --- what a search matches beyond names, namespaces and labels (query/search.py) -------------
# The status each list shows of an object: a pod's status column, a workload's bucket in its
# list status block (from its pods and their events: read from the list's related reads), a
# job's jobStatus, a node's Ready condition; and the images and node of pods and workloads.

_POD_SEARCH = Facets.of_properties(pods.PROPERTIES, images=pods.images, node=pods.node_name)
_OWNER_SEARCH = Facets(status=of_related(workload_status.owned_status_text), status_reads=True,
                       buckets=workload_status.owned_status_buckets,
                       images=workloads.template_images)


def _owned_status(kind):
    """Workloads owning their pods: list status counters kept per event, the kind's own
    count by namespace (workloads.owned_status_counted)."""
    return dict(status_facts=workload_status.status_facts,
                status_split=workload_status.status_split,
                status_counted=workload_status.owned_status_counted(kind))


TABLE = [
    Kind("pod", plural="pods", list_key="pods", item=pods.item, projection=POD,
         indexes={"controller": joins.controller, "node": joins.node,
                  "pending": joins.pending_controller, "unready": joins.unready,
                  "running_job": joins.running_job},
         list_needs=("events",), list_status=pods.list_status, status_facts=pods.status_facts,
         status_split=pods.status_split, status_counted=pods.status_counted,
         key_item=pods.key_item, properties=pods.PROPERTIES, search=_POD_SEARCH,
         metrics=members.POD,
         detail=pods.detail, detail_needs=pods.detail_needs, embeds=pods.EMBEDS,
         sublists=(pods.CONTAINERS, _EVENTS, pods.CLAIMS),
         item_fields={"status": "string", "restartCount": "integer", "metrics": None,
                      "warnings": "array", "nodeName": "string", "containerImages": "array",
                      "containerStatuses": "array", "allocatedResources": "object"},
         detail_fields={"podPhase": "string", "podIP": "string", "nodeName": "string",
                        "serviceAccountName": "string", "restartCount": "integer",
                        "qosClass": "string", "containers": "array", "initContainers": "array",
                        "metrics": "array", "conditions": "array", "securityContext": "object",
                        "controller": "object", "eventList": "object",
                        "persistentVolumeClaimList": "object", "warning": "string",
                        "imagePullSecrets": "array"}),
    Kind("deployment", group="apps", plural="deployments", list_key="deployments",
         item=workloads.deployment, projection=TEMPLATED,
         list_needs=("pods", "events", "replicasets"),
         list_status=workload_status.deployment_list_status,
         status_facts=workload_status.status_facts, status_split=workload_status.status_split,
         status_counted=workload_status.deployment_status_counted,
         search=Facets(status=of_related(workload_status.deployment_status_text),
                       status_reads=True, buckets=workload_status.deployment_status_buckets,
                       images=workloads.template_images),
         metrics=members.DEPLOYMENT_PODS, detail=workload_details.deployment_detail,
         detail_needs=workload_details.deployment_detail_needs,
         sublists=(_EVENTS, workload_details.OLD_REPLICA_SETS, workload_details.NEW_REPLICA_SET),
         item_fields=dict(_IMAGES, pods="object"),
         detail_fields=dict(_IMAGES, pods="object", selector="object", statusInfo="object",
                            conditions="array", strategy="string", minReadySeconds="integer",
                            revisionHistoryLimit="integer", rollingUpdateStrategy="object")),
    Kind("replicaset", group="apps", plural="replicasets", list_key="replicaSets",
         item=workloads.replicaset, projection=REPLICA_SET, indexes=joins.CONTROLLED,
         list_needs=("pods", "events"), list_status=workload_status.list_status,
         **_owned_status("replicaset"), search=_OWNER_SEARCH, metrics=members.OWNED_PODS,
         detail=workload_details.replicaset_detail,
         detail_needs=workload_details.replicaset_detail_needs,
         sublists=(workload_details.OWNED_PODS, workload_details.SERVICES, _EVENTS),
         item_fields=_POD_INFO,
         detail_fields=dict(_POD_INFO, selector="object",
                            horizontalPodAutoscalerList="object")),
    Kind("replicationcontroller", plural="replicationcontrollers",
         list_key="replicationControllers", item=workloads.replicationcontroller,
         projection=TEMPLATED, list_needs=("pods", "events"),
         list_status=workload_status.list_status, **_owned_status("replicationcontroller"),
         search=_OWNER_SEARCH,
         metrics=members.OWNED_PODS, detail=workload_details.replicationcontroller_detail,
         detail_needs=workload_details.owned_pods_needs,
         sublists=(workload_details.OWNED_PODS, workload_details.SERVICES, _EVENTS),
         item_fields=_POD_INFO, detail_fields=dict(_POD_INFO, labelSelector="object")),
    Kind("daemonset", group="apps", plural="daemonsets", list_key="daemonSets",
         item=workloads.daemonset, projection=TEMPLATED, list_needs=("pods", "events"),
         list_status=workload_status.list_status, **_owned_status("daemonset"),
         search=_OWNER_SEARCH,
         metrics=members.OWNED_PODS,
         detail=workload_details.daemonset_detail,
         detail_needs=workload_details.owned_pods_needs,
         sublists=(workload_details.OWNED_PODS, workload_details.SERVICES, _EVENTS),
         item_fields=_POD_INFO, detail_fields=dict(_POD_INFO, labelSelector="object")),
    Kind("statefulset", group="apps", plural="statefulsets", list_key="statefulSets",
         item=workloads.statefulset, projection=TEMPLATED, list_needs=("pods", "events"),
         list_status=workload_status.list_status, **_owned_status("statefulset"),
         search=_OWNER_SEARCH,
         metrics=members.OWNED_PODS,
         detail=workload_details.statefulset_detail,
         detail_needs=workload_details.owned_pods_needs,
         sublists=(workload_details.OWNED_PODS, _EVENTS), item_fields=_POD_INFO,
         detail_fields=_POD_INFO),
    Kind("job", group="batch", plural="jobs", list_key="jobs", item=workloads.job,
         projection=TEMPLATED, indexes=joins.CONTROLLED, list_needs=("pods", "events"),
         list_status=workload_status.job_list_status,
         status_facts=workload_status.job_status_facts,
         status_split=workload_status.job_status_split,
         status_counted=workload_status.job_status_counted,
         search=Facets(status=of_object(workload_status.job_status_text),
                       images=workloads.template_images),
         metrics=members.OWNED_PODS,
         detail=workload_details.job_detail, detail_needs=workload_details.job_pods_needs,
         sublists=(workload_details.JOB_PODS, _EVENTS),
         item_fields=dict(_POD_INFO, parallelism="integer", jobStatus="object"),
         detail_fields=dict(_POD_INFO, parallelism="integer", jobStatus="object",
                            completions="integer")),
    Kind("cronjob", group="batch", plural="cronjobs", versions=("v1", "v1beta1"),
         item=cronjobs.item, projection=CRONJOB, list_status=cronjobs.list_status,
         search=Facets(status=of_object(cronjobs.status_text), images=cronjobs.images),
         detail=cronjobs.detail, sublists=(cronjobs.JOBS, _EVENTS), item_fields=_CRONJOB,
         detail_fields=dict(_CRONJOB, concurrencyPolicy="string",
                            startingDeadlineSeconds="integer")),
    Kind("namespace", plural="namespaces", namespaced=False, list_key="namespaces",
         item=cluster.namespace, one_by_one=True, search=Facets(status=of_object(cluster.phase)),
         detail=cluster.namespace_detail,
         detail_needs=cluster.namespace_detail_needs, sublists=(cluster.NAMESPACE_EVENTS,),
         item_fields={"phase": "string"},
         detail_fields={"phase": "string", "resourceQuotaList": "object",
                        "resourceLimits": "array"}),
    Kind("node", plural="nodes", namespaced=False, list_key="nodes", item=cluster.node,
         projection=NODE, search=Facets(status=of_object(cluster.node_status)),
         metrics=members.NODE, detail=cluster.node_detail, page_needs=cluster.node_pods_needs,
         finish=cluster.node_finish, detail_needs=cluster.node_detail_needs,
         embeds=cluster.NODE_EMBEDS, sublists=(cluster.NODE_PODS, cluster.NODE_EVENTS),
         item_fields=_NODE,
         detail_fields=dict(_NODE, phase="string", podCIDR="string", providerID="string",
                            unschedulable="boolean", conditions="array",
                            containerImages="array", metrics="array", addresses="array",
                            podList="object", eventList="object", warning="string",
                            taints="array")),
    Kind("event", plural="events", list_key="events", item=events.event, projection=EVENT,
         indexes={"involved": joins.involved, "warned": joins.warned,
                  "named": joins.involved_name},
         properties=events.PROPERTIES, filterable=False,
         item_fields={"message": "string", "sourceComponent": "string", "sourceHost": "string",
                      "object": "string", "count": "integer", "firstSeen": "string",
                      "lastSeen": "string", "reason": "string", "type": "string",
                      "objectKind": "string", "objectName": "string",
                      "objectNamespace": "string"}),
    # Services and networking, config and storage, autoscaling.
    Kind("service", plural="services", list_key="services", item=services.item,
         properties=services.PROPERTIES, detail=services.detail,
         detail_needs=services.detail_needs,
         sublists=(_EVENTS, services.PODS, services.INGRESSES), item_fields=_SERVICE,
         detail_fields=dict(_SERVICE, endpointList="object", sessionAffinity="string")),
    Kind("persistentvolumeclaim", plural="persistentvolumeclaims", item=storage.claim,
         search=Facets(status=of_object(storage.claim_phase)),
         detail=storage.claim, item_fields=_PVC, detail_fields=_PVC),
    Kind("horizontalpodautoscaler", group="autoscaling", plural="horizontalpodautoscalers",
         list_key="horizontalpodautoscalers", item=autoscaling.item,
         versions=("v2", "v2beta2", "v1"), detail=autoscaling.detail, item_fields=_HPA,
         detail_fields=dict(_HPA, currentReplicas="integer", desiredReplicas="integer",
                            lastScaleTime="string")),
    # Networking, config and storage, access control and policy, custom resources.
    Kind("ingress", group="networking.k8s.io", plural="ingresses", versions=("v1", "v1beta1"),
         item=networking.ingress, detail=networking.ingress_detail, sublists=(_EVENTS,),
         item_fields={"endpoints": "array", "hosts": "array"},
         detail_fields={"endpoints": "array", "hosts": "array", "spec": "object",
                        "status": "object"}),
    Kind("ingressclass", group="networking.k8s.io", plural="ingressclasses", namespaced=False,
         versions=("v1", "v1beta1"), item=networking.ingress_class,
         detail=networking.ingress_class_detail, item_fields={"controller": "string"},
         detail_fields={"controller": "string", "parameters": "object"}),
    Kind("networkpolicy", group="networking.k8s.io", plural="networkpolicies",
         item=networking.network_policy, detail=networking.network_policy_detail,
         detail_fields={"podSelector": "object", "ingress": "array", "egress": "array",
                        "policyTypes": "array"}),
    Kind("configmap", plural="configmaps", item=config.config_map, projection=NO_DATA,
         detail=config.config_map_detail, detail_fields={"data": "object"}),
    # Never cached: a secret's list goes to the API server with the caller's token.
    Kind("secret", plural="secrets", list_key="secrets", item=config.secret, cached=False,
         detail=config.secret_detail, item_fields={"type": "string"},
         detail_fields={"type": "string", "data": "object"}),
    Kind("persistentvolume", plural="persistentvolumes", namespaced=False, item=storage.volume,
         properties=storage.VOLUME_PROPERTIES, detail=storage.volume_detail, item_fields=_PV,
         detail_fields=dict(_PV, message="string", persistentVolumeSource="object")),
    Kind("storageclass", group="storage.k8s.io", plural="storageclasses", namespaced=False,
         item=storage.storage_class, detail=storage.storage_class,
         sublists=(storage.CLASS_VOLUMES,), item_fields=_STORAGE_CLASS,
         detail_fields=_STORAGE_CLASS),
    Kind("role", group="rbac.authorization.k8s.io", plural="roles", item=rbac.role,
         detail=rbac.role_detail, detail_fields={"rules": "array"}),
    Kind("rolebinding", group="rbac.authorization.k8s.io", plural="rolebindings",
         item=rbac.role_binding, detail=rbac.role_binding_detail, detail_fields=_BINDING),
    Kind("clusterrole", group="rbac.authorization.k8s.io", plural="clusterroles",
         namespaced=False, item=rbac.cluster_role, detail=rbac.cluster_role_detail,
         detail_fields={"rules": "array"}),
    Kind("clusterrolebinding", group="rbac.authorization.k8s.io", plural="clusterrolebindings",
         namespaced=False, item=rbac.cluster_role_binding,
         detail=rbac.cluster_role_binding_detail, detail_fields=_BINDING),
    Kind("serviceaccount", plural="serviceaccounts", item=rbac.service_account,
         detail=rbac.service_account_detail,
         sublists=(rbac.ACCOUNT_SECRETS, rbac.ACCOUNT_PULL_SECRETS)),
    Kind("poddisruptionbudget", group="policy", plural="poddisruptionbudgets",
         versions=("v1", "v1beta1"), item=policy.budget, detail=policy.budget_detail,
         item_fields=_PDB, detail_fields=dict(_PDB, disruptedPods="object")),
    # The CRD's detail route is in handlers/customresources.py: its objects' list needs a spec
    # built from the CRD.
    Kind("crd", group="apiextensions.k8s.io", plural="customresourcedefinitions",
         namespaced=False, item=crds.item, properties=crds.PROPERTIES,
         keep=crds.has_served_version,
         item_fields={"version": "string", "group": "string", "scope": "string",
                      "names": "object", "established": "string"}),
    # Built-in kinds beyond the specification's 28.
    Kind("resourcequota", plural="resourcequotas", item=quotas.quota,
         detail=quotas.quota_detail, item_fields=_QUOTA,
         detail_fields=dict(_QUOTA, scopeSelector="object")),
    Kind("limitrange", plural="limitranges", item=quotas.limit_range,
         detail=quotas.limit_range, item_fields={"limits": "array"},
         detail_fields={"limits": "array"}),
    Kind("endpointslice", group="discovery.k8s.io", plural="endpointslices",
         versions=("v1", "v1beta1"), item=endpointslices.endpoint_slice,
         projection=ENDPOINT_SLICE,
         properties=endpointslices.PROPERTIES, detail=endpointslices.endpoint_slice,
         item_fields=_SLICE, detail_fields=_SLICE),
    # Every node renews its lease every 10 seconds: cached only when asked for.
    Kind("lease", group="coordination.k8s.io", plural="leases", versions=("v1", "v1beta1"),
         cached=OPT_IN, item=coordination.lease, properties=coordination.PROPERTIES,
         detail=coordination.lease, item_fields=_LEASE, detail_fields=_LEASE),
    Kind("priorityclass", group="scheduling.k8s.io", plural="priorityclasses",
         namespaced=False, versions=("v1", "v1beta1"), item=scheduling.priority_class,
         detail=scheduling.priority_class, item_fields=_PRIORITY, detail_fields=_PRIORITY),
    Kind("runtimeclass", group="node.k8s.io", plural="runtimeclasses", namespaced=False,
         versions=("v1", "v1beta1"), item=scheduling.runtime_class,
         detail=scheduling.runtime_class_detail, item_fields={"handler": "string"},
         detail_fields={"handler": "string", "overhead": "object", "scheduling": "object"}),
    Kind("csidriver", group="storage.k8s.io", plural="csidrivers", namespaced=False,
         versions=("v1", "v1beta1"), item=csi.driver, detail=csi.driver_detail,
         item_fields=_CSI,
         detail_fields=dict(_CSI, requiresRepublish="boolean", tokenRequests="array",
                            seLinuxMount="boolean")),
    Kind("mutatingwebhookconfiguration", group="admissionregistration.k8s.io",
         plural="mutatingwebhookconfigurations", namespaced=False, versions=("v1", "v1beta1"),
         projection=NO_CA_BUNDLES, item=admission.mutating, detail=admission.mutating_detail,
         item_fields=_WEBHOOKS, detail_fields=_WEBHOOKS),
    Kind("validatingwebhookconfiguration", group="admissionregistration.k8s.io",
         plural="validatingwebhookconfigurations", namespaced=False,
         versions=("v1", "v1beta1"), projection=NO_CA_BUNDLES, item=admission.validating,
         detail=admission.validating_detail, item_fields=_WEBHOOKS, detail_fields=_WEBHOOKS),
]

KINDS = {k.name: k for k in TABLE}
_BY_RESOURCE = {(k.group, k.plural): k for k in TABLE}


def get(name):
    return KINDS[name]


def of_resource(group, plural):
    """The spec serving (group, plural), or None (a CRD's objects, a resource read as reads.Api)."""
    return _BY_RESOURCE.get((group, plural))
