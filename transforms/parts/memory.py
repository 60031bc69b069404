"""The peak resident memory of this process over a step, sampled: what a worker's memory limit
sees of it. (`ru_maxrss` only grows over a worker's life, so it cannot tell one step's peak
from an earlier step's on the same worker.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil

INTERVAL_SECONDS = 0.05


@dataclass
class Peak:
    mb: float = 0.0


@contextmanager
def peak_rss() -> Iterator[Peak]:
    """Sample this process's resident set every INTERVAL_SECONDS while the block runs; the
    yielded Peak holds the highest, in MiB, once the block is done."""
    process = psutil.Process()
    peak = Peak(process.memory_info().rss / 2**20)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(INTERVAL_SECONDS):
            peak.mb = max(peak.mb, process.memory_info().rss / 2**20)

    sampler = threading.Thread(target=sample, name="peak-rss", daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stop.set()
        sampler.join()
        peak.mb = round(max(peak.mb, process.memory_info().rss / 2**20), 1)
