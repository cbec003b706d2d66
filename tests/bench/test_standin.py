"""The stand-in API server's own logic (tests/bench/standin.py), without a socket."""

import json

from tests.bench import standin


def _lines(text):
    return [json.loads(line) for line in text.splitlines()]


def test_a_watch_backlog_comes_a_batch_at_a_time():
    """A watch from an old version gets its backlog in batches of at most WATCH_BATCH lines,
    each with the version it reaches (the handler writes and yields between them), every change
    of its kind once, in order, and those of other kinds passed over."""
    state = standin.State(200)
    start = state.version
    state.tick(600)
    state.version += 1
    state.log.append((state.version, "events", "ADDED", 0))   # another kind's: passed over
    state.tick(10)

    batches = list(state.backlog(start, "pods", batch=256))
    assert [len(_lines(text)) for _, text in batches] == [256, 256, 98]
    assert [cursor for cursor, _ in batches] == [start + 256, start + 512, state.version]
    events = [e for _, text in batches for e in _lines(text)]
    assert {e["type"] for e in events} == {"MODIFIED"}
    changed = [i for rv, what, _, i in state.log if what == "pods"]
    assert [e["object"]["metadata"]["name"] for e in events] == \
        [state.pods.name(i) for i in changed]

    # from a version in the middle: only what came after it
    later = list(state.backlog(start + 600, "pods"))
    assert sum(len(_lines(text)) for _, text in later) == 10
    assert later[-1][0] == state.version
    # nothing after it: one empty batch that says where the watch is
    assert list(state.backlog(state.version, "pods")) == [(state.version, "")]
