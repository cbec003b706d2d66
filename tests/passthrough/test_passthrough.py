"""The pass-through path (--watch-cache=false; --proxy lists the same way): a representative set
of the feature checks, run on a gateway whose lists go to the API server with the caller's
token. The feature directories run the default, the watch cache; tests/cache compares the two
for every kind."""

# Imported tests run here with this directory's ``gateway``.
from tests.resources.test_cluster import test_event_lists, test_namespace_routes  # noqa: F401
from tests.resources.test_config_storage import test_config_maps, test_secrets  # noqa: F401
from tests.resources.test_pods import (  # noqa: F401
    test_pod_detail, test_pod_list_dataselect, test_pod_list_shape_and_values, test_pod_rights)
from tests.resources.test_workloads import (  # noqa: F401
    test_deployment_routes, test_deployments_with_partial_rights,
    test_workload_lists_across_namespaces)
from tests.writes.test_read_your_writes import (  # noqa: F401
    synced, test_create_update_and_delete_then_list, test_deploy_scale_and_delete_then_list)
