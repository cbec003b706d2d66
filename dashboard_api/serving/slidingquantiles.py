"""Quantiles over a true sliding time window, in bounded memory.

Observations are counted in logarithmic value bins (each bin's representative is within
``relative_error`` of every value it holds, as in DDSketch) and grouped in time slices of
``resolution`` seconds. An observation leaves the window when its slice is older than ``window``,
so the window slides by one slice at a time rather than being reset or rotated in big steps.
Memory is bounded by (window / resolution) slices times the number of distinct bins in use.
No I/O, no Tornado: the clock is injected.
"""

import collections
import math
import time


class SlidingQuantiles:
    def __init__(self, window=3600.0, resolution=1.0, relative_error=0.01, clock=time.monotonic):
        if window <= 0 or resolution <= 0 or not 0 < relative_error < 1:
            raise ValueError("window and resolution must be positive, relative_error in (0, 1)")
        self._slices_kept = max(1, int(math.ceil(window / resolution)))
        self._resolution = resolution
        self._gamma = (1 + relative_error) / (1 - relative_error)
        self._log_gamma = math.log(self._gamma)
        self._clock = clock
        self._slices = collections.deque()  # (slice number, Counter of bin -> count)
        self._totals = collections.Counter()

    def _bin(self, value):
        # Bin None holds zero and negative values (a latency can round down to 0).
        if value <= 0:
            return None
        return math.ceil(math.log(value) / self._log_gamma)

    def _value(self, bin_index):
        if bin_index is None:
            return 0.0
        return 2 * self._gamma ** bin_index / (self._gamma + 1)

    def _advance(self):
        current = int(self._clock() // self._resolution)
        oldest_kept = current - self._slices_kept + 1
        while self._slices and self._slices[0][0] < oldest_kept:
            _, counts = self._slices.popleft()
            self._totals.subtract(counts)
            for b in counts:
                if self._totals[b] <= 0:
                    del self._totals[b]
        return current

    def observe(self, value):
        current = self._advance()
        if not self._slices or self._slices[-1][0] != current:
            self._slices.append((current, collections.Counter()))
        b = self._bin(value)
        self._slices[-1][1][b] += 1
        self._totals[b] += 1

    def count(self):
        """Observations inside the window now."""
        self._advance()
        return sum(self._totals.values())

    def quantiles(self, qs):
        """{q: value} for each q in [0, 1]; NaN when the window holds nothing."""
        self._advance()
        total = sum(self._totals.values())
        if total == 0:
            return {q: math.nan for q in qs}
        ordered = sorted(self._totals.items(), key=lambda kv: -math.inf if kv[0] is None else kv[0])
        out = {}
        for q in qs:
            # The value at rank ceil(q * total), counting from 1, as a nearest-rank quantile.
            rank = max(1, math.ceil(q * total))
            seen = 0
            for b, n in ordered:
                seen += n
                if seen >= rank:
                    out[q] = self._value(b)
                    break
        return out
