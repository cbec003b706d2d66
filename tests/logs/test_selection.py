"""The selection algorithm without a cluster: upstream's worked examples (reference 9.5) and the
honest truncation rule."""

from dashboard_api.logs.details import ReadPlan, log_details
from dashboard_api.logs.lines import LogLine, parse_lines, sort_key
from dashboard_api.logs.selection import BEGINNING, END, NEWEST, OLDEST, LineId, Selection, select

ALL = 2_000_000_000


def lines(*stamps):
    return [LogLine(ts, "log%d" % i) for i, ts in enumerate(stamps, 1)]


FIVE = lines("1", "2", "3", "4", "5")


def run(log, ref, offset_from, offset_to, position=""):
    page = select(log, Selection(ref, offset_from, offset_to, position))
    return [line.content for line in page.lines], page.selection.to_json()


def sel(ts, num, offset_from, offset_to, position=""):
    return {"referencePoint": {"timestamp": ts, "lineNum": num}, "offsetFrom": offset_from,
            "offsetTo": offset_to, "logFilePosition": position}


def test_whole_log():
    got, selection = run(FIVE, LineId(NEWEST), -ALL, ALL)
    assert got == ["log1", "log2", "log3", "log4", "log5"]
    assert selection == sel("3", -1, -2, 3)


def test_from_oldest():
    assert run(FIVE, LineId(OLDEST), 1, 3) == (["log2", "log3"], sel("3", -1, -1, 1))


def test_from_newest():
    assert run(FIVE, LineId(NEWEST), -3, -1) == (["log2", "log3"], sel("3", -1, -1, 1))


def test_from_a_timestamp():
    assert run(FIVE, LineId("4", 1), -2, 0)[0] == ["log2", "log3"]


def test_window_past_the_newest_line_is_shifted_back():
    assert run(FIVE, LineId("4", 1), 1, 3) == (["log4", "log5"], sel("3", -1, 1, 3))


def test_window_before_the_oldest_line_is_shifted_forward():
    assert run(FIVE, LineId("4", 1), -50, -48) == (["log1", "log2"], sel("3", -1, -2, 0))


def test_lines_sharing_a_timestamp():
    same = lines("1", "1", "1", "1", "1")
    assert run(same, LineId("1", 2), 0, 2) == (["log2", "log3"], sel("1", 3, -1, 1))
    # Negative numbers count from the end of the run.
    assert run(same, LineId("1", -1), 0, 1)[0] == ["log5"]


def test_unknown_reference_or_empty_window_gives_nothing():
    empty = sel("", 0, 0, 0)
    assert run(FIVE, LineId("9", 1), 0, 2) == ([], empty)
    assert run(FIVE, LineId("3", 2), 0, 2) == ([], empty)
    assert run(FIVE, LineId(NEWEST), 2, 2) == ([], empty)
    assert run([], LineId(NEWEST), -10, 1) == ([], empty)


def test_untrimmed_and_trimmed_fractions_sort_as_times():
    # The kubelet trims trailing zeros: ".1Z" is earlier than ".12Z" though it sorts after it.
    log = lines("2024-01-01T00:00:05.1Z", "2024-01-01T00:00:05.12Z", "2024-01-01T00:00:06Z")
    assert sort_key("2024-01-01T00:00:05.1Z") < sort_key("2024-01-01T00:00:05.12Z")
    assert run(log, LineId("2024-01-01T00:00:05.12Z", 1), 0, 1)[0] == ["log2"]
    assert run(log, LineId("2024-01-01T02:00:05.120+02:00", 1), 0, 1)[0] == ["log2"]


def test_parsing():
    got = parse_lines("2024-01-01T00:00:00Z hello world\n\nno timestamp here\n7\n")
    assert [(x.timestamp, x.content) for x in got] == [
        ("2024-01-01T00:00:00Z", "hello world"), ("0", "no timestamp here"), ("0", "7")]


def raw(count, start=1):
    return "".join("%d line %d\n" % (i, i) for i in range(start, start + count)).encode()


def details(data, selection, plan, timestamps=False, since=None):
    log, cut = plan.trim(data, since=since)
    return log_details("p", "c", log, cut, plan, selection, timestamps)


def test_truncated_only_when_the_log_held_more_lines():
    plan = ReadPlan(False, 10)
    assert plan.params() == {"tailLines": 11, "timestamps": "true"}
    # Eleven lines fetched with a limit of ten: the oldest is cut off.
    out = details(raw(11), Selection(LineId("6", 1), -10, -8, END), plan)
    assert out["logs"] == ["line 2", "line 3"]
    assert out["info"]["truncated"] is True
    assert out["selection"] == sel("7", -1, -5, -3, END)
    # Exactly ten lines: nothing is missing (upstream would say truncated).
    out = details(raw(10), Selection(LineId("5", 1), -10, -8, END), plan)
    assert out["logs"] == ["line 1", "line 2"] and out["info"]["truncated"] is False
    # A page away from the cut-off end is not truncated.
    out = details(raw(11), Selection.last_lines(3), plan)
    assert out["logs"] == ["line 9", "line 10", "line 11"] and out["info"]["truncated"] is False


def test_truncated_by_bytes_keeps_whole_lines():
    plan = ReadPlan(True, 40)
    assert plan.params() == {"limitBytes": 41, "timestamps": "true"}
    data = raw(5)[:41]  # what the API server sends with limitBytes=41
    out = details(data, Selection(LineId(OLDEST), 0, 100, BEGINNING), plan, timestamps=True)
    assert out["logs"] == ["1 line 1", "2 line 2", "3 line 3", "4 line 4"]
    assert out["info"]["truncated"] is True
    assert (out["info"]["fromDate"], out["info"]["toDate"]) == ("1", "4")
    out = details(data, Selection(LineId(OLDEST), 0, 2, BEGINNING), plan)
    assert out["info"]["truncated"] is False


def test_since_drops_earlier_lines_and_clears_the_cut():
    plan = ReadPlan(False, 3)
    data = (b"2024-01-01T00:00:01.5Z a\n2024-01-01T00:00:02Z b\n"
            b"2024-01-01T00:00:02.25Z c\n2024-01-01T00:00:03Z d\n")
    out = details(data, Selection.last_lines(100), plan, since="2024-01-01T00:00:02.1Z")
    assert out["logs"] == ["c", "d"] and out["info"]["truncated"] is False


def test_unparsed_text_is_one_line_without_timestamp():
    out = details(b"container is waiting to start", Selection.last_lines(), ReadPlan(False, 10),
                  timestamps=True)
    assert out["logs"] == ["container is waiting to start"]
    assert out["selection"] == sel("0", 1, 0, 1, END)
