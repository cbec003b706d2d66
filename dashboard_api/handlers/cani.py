"""POST /api/v1/can-i: may the caller do verb on resource in namespace?"""

from dashboard_api.serving.errors import bad_request
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.routes import COMMAND_BODY, Route


class CanIHandler(BaseHandler):
    async def post(self):
        spec = self.json_body()
        if not isinstance(spec, dict):
            raise bad_request("body must be an object with verb, resource and namespace")
        verb, resource = spec.get("verb"), spec.get("resource")
        if not isinstance(verb, str) or not verb or not isinstance(resource, str) or not resource:
            raise bad_request("verb and resource are required strings")
        attributes = {"verb": verb, "resource": resource}
        for key in ("namespace", "group", "subresource", "name"):
            value = spec.get(key)
            if value is not None and not isinstance(value, str):
                # Ignoring it would answer for a wider question than the one asked.
                raise bad_request("%s must be a string" % key)
            if value:
                attributes[key] = value
        self.write_json({"allowed": await self.caller().can_i(**attributes)})


ROUTES = [
    Route("/api/v1/can-i", CanIHandler, "can-i", audit=False,
          max_body=COMMAND_BODY,
          summary="Checks a permission of the caller with a SelfSubjectAccessReview"),
]
