"""The gateway's series arithmetic and Metric objects, and metricNames/aggregations parsing."""

import pytest

from dashboard_api.metrics.aggregate import aggregated, metric, summed
from dashboard_api.query import listquery
from dashboard_api.serving.errors import ApiError

A = {1000: 10, 2000: 20, 3000: 30}
B = {2000: 5, 3000: 100}
C = {3000: 1}


def test_summed_adds_per_x():
    assert summed([A, B, C]) == {1000: 10, 2000: 25, 3000: 131}
    assert summed([]) == {}


@pytest.mark.parametrize("how, expected", [
    ("sum", {1000: 10, 2000: 25, 3000: 131}),
    ("min", {1000: 10, 2000: 5, 3000: 1}),
    ("max", {1000: 10, 2000: 20, 3000: 100}),
    ("avg", {1000: 10, 2000: 12.5, 3000: 131 / 3}),
])
def test_aggregations_over_the_series_with_a_value(how, expected):
    assert aggregated([A, B, C], how) == expected


def test_metric_object_shape():
    m = metric("cpu/usage", {2000: 7.6, 1000: 3}, {"pod": ["p"]}, "avg")
    assert m == {
        "metricName": "cpu/usage",
        "dataPoints": [{"x": 1000, "y": 3}, {"x": 2000, "y": 7.6}],
        "metricPoints": [{"timestamp": "1970-01-01T00:00:01Z", "value": 3},
                         {"timestamp": "1970-01-01T00:00:02Z", "value": 8}],
        "label": {"pod": ["p"]},
        "aggregation": "avg",
    }


def parse(**args):
    return listquery.parse(lambda name: args.get(name))


def test_metric_names_and_aggregations_are_parsed():
    q = parse(metricNames="cpu/usage, memory/usage,cpu/usage", aggregations="max,avg")
    assert q.metric_names == ("cpu/usage", "memory/usage")
    assert q.aggregations == ("max", "avg")
    q = parse(metricNames="cpu/usage_rate,memory/limit")
    assert q.metric_names == ("cpu/usage_rate", "memory/limit")
    assert q.aggregations == ("sum",)
    assert parse().metric_names == () and parse().aggregations == ("sum",)


@pytest.mark.parametrize("args", [{"aggregations": "median"}, {"aggregations": "sum,SUM"},
                                  {"metricNames": "cpu/usage,disk/usage"},
                                  {"metricNames": "cpu"}])
def test_unknown_names_are_a_400(args):
    with pytest.raises(ApiError) as err:
        parse(**args)
    assert err.value.code == 400 and err.value.reason == "BadRequest"
