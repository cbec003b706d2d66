"""The three request series of /metrics, rendered in the text exposition format."""

import re

from dashboard_api.serving.telemetry import LATENCY_BUCKETS, SUMMARY_SLICE, SUMMARY_WINDOW, \
    Telemetry


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def sample(text, line_start):
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no sample %r in:\n%s" % (line_start, text))


def test_bucket_bounds_are_the_seven_doublings_in_microseconds():
    assert LATENCY_BUCKETS == (125_000, 250_000, 500_000, 1_000_000, 2_000_000, 4_000_000,
                               8_000_000)


def test_series_names_types_and_labels():
    t = Telemetry(clock=Clock())
    t.record("GET", "pod", "", "application/json", 200, 0.3)
    t.record("GET", "pod", "curl/8", "application/json", 200, 0.1)
    text = t.exposition().decode()
    assert "# TYPE apiserver_request_count counter" in text
    assert "# TYPE apiserver_request_latencies histogram" in text
    assert "# TYPE apiserver_request_latencies_summary summary" in text
    assert "_total" not in text and "_created" not in text
    assert sample(text, 'apiserver_request_count{client="unknown",code="200",'
                        'contentType="application/json",resource="pod",verb="GET"}') == 1
    assert sample(text, 'apiserver_request_latencies_bucket{le="125000.0",resource="pod",'
                        'verb="GET"}') == 1
    assert sample(text, 'apiserver_request_latencies_bucket{le="500000.0",resource="pod",'
                        'verb="GET"}') == 2
    assert len(re.findall(r"apiserver_request_latencies_bucket\{", text)) == 8  # 7 + Inf
    assert sample(text, 'apiserver_request_latencies_sum{resource="pod",verb="GET"}') == \
        400_000


def test_summary_quantiles_forget_after_an_hour_but_sum_and_count_do_not():
    clock = Clock()
    t = Telemetry(clock=clock)
    t.record("PUT", "scale", "ui", "application/json", 200, 2.0)
    median = 'apiserver_request_latencies_summary{quantile="0.5",resource="scale",verb="PUT"}'
    assert abs(sample(t.exposition().decode(), median) - 2_000_000) < 20_000
    clock.now += 3600
    text = t.exposition().decode()
    assert "NaN" in [line.rsplit(" ", 1)[1] for line in text.splitlines()
                     if line.startswith(median)]
    assert sample(text, 'apiserver_request_latencies_summary_count{resource="scale",'
                        'verb="PUT"}') == 1
    assert sample(text, 'apiserver_request_latencies_summary_sum{resource="scale",'
                        'verb="PUT"}') == 2_000_000


def test_a_busy_series_keeps_a_slice_a_step_not_a_slice_a_second():
    """Two hours of a request a second: the window holds at most its slices of SUMMARY_SLICE
    seconds (360), not one a second (3,600), and its quantiles are still the last hour's."""
    clock = Clock()
    t = Telemetry(clock=clock)
    for second in range(7200):
        clock.now = float(second)
        t.record("GET", "pod", "ui", "application/json", 200, 0.1 if second < 3600 else 0.4)
    [(window, _total, count)] = t.summary._series.values()
    assert count == 7200
    assert len(window._slices) <= SUMMARY_WINDOW / SUMMARY_SLICE + 1
    median = 'apiserver_request_latencies_summary{quantile="0.5",resource="pod",verb="GET"}'
    assert abs(sample(t.exposition().decode(), median) - 400_000) < 4_000


def test_label_values_are_escaped():
    t = Telemetry(clock=Clock())
    t.record("GET", "pod", 'a "quoted"\\agent\n', "text/plain", 404, 0.0)
    assert 'client="a \\"quoted\\"\\\\agent\\n"' in t.exposition().decode()


def test_runtime_collectors_are_optional():
    assert "process_" not in Telemetry().exposition().decode()
    assert "process_cpu_seconds_total" in Telemetry(runtime=True).exposition().decode()


def test_client_label_values_are_bounded():
    t = Telemetry(clock=Clock(), max_clients=3)
    for i in range(50):
        t.record("GET", "pod", "agent-%d" % i, "application/json", 200, 0.0)
    t.record("GET", "pod", "agent-1", "application/json", 200, 0.0)
    text = t.exposition().decode()
    clients = set(re.findall(r'apiserver_request_count\{client="([^"]*)"', text))
    assert clients == {"agent-0", "agent-1", "agent-2", "other"}
    assert sample(text, 'apiserver_request_count{client="other"') == 47
    assert sample(text, 'apiserver_request_count{client="agent-1"') == 2


def test_default_client_bound():
    t = Telemetry(clock=Clock())
    for i in range(300):
        t.record("GET", "pod", "ua-%d" % i, "application/json", 200, 0.0)
    text = t.exposition().decode()
    assert len(set(re.findall(r'apiserver_request_count\{client="([^"]*)"', text))) == 101
