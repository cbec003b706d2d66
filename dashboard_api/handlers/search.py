"""GET /api/v1/search (issue #38): every kind the gateway lists searched at once, with the
query language of every list's name filter (query/search.py). HTTP only: the work is the list
road's (lists/search.py)."""

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.lists import search as searching
from dashboard_api.query import search
from dashboard_api.serving import params
from dashboard_api.serving.routes import Route


class SearchHandler(BaseHandler):
    async def get(self):
        fetch = self.reads()
        arg = self.get_query_argument
        query = search.parse(arg("q", ""))
        per_page = params.integer("itemsPerPage", arg("itemsPerPage", None),
                                  searching.DEFAULT_ITEMS_PER_PAGE, 0)
        page = params.integer("page", arg("page", None), 1, 1)
        await self.write_list(await searching.search(fetch, query, per_page, page))


ROUTES = [
    Route("/api/v1/search", SearchHandler, "search",
          summary="Searches every kind the caller may list: names, labels, namespaces, "
                  "statuses, nodes, images (the query language of every list's name filter)"),
]
