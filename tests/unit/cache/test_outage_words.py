"""What a person is told of an outage (cache/outage.py ``described``): the system banner and
the pushed notices say it."""

import calendar

from dashboard_api.cache.outage import described as outage_message


def test_the_warning_says_since_when_with_the_date_when_not_today():
    since = calendar.timegm((2026, 3, 4, 12, 3, 4))
    assert outage_message(since, now=since + 60) == (
        "The cluster's API server has not answered since 12:03:04 UTC: the lists show what "
        "was last seen then.")
    assert "since 2026-03-04 12:03:04 UTC" in outage_message(since, now=since + 86400)
