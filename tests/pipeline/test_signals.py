"""A build started in the background keeps stopping on SIGTERM (pipelines.signals)."""

from __future__ import annotations

import signal

import dagster as dg

from pipelines.signals import sigterm_kept


@dg.op
def _nothing() -> None:
    return None


@dg.job
def _tiny() -> None:
    _nothing()


def test_an_in_process_run_leaves_sigterm_as_it_found_it():
    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell's background job
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        _tiny.execute_in_process()
        # Dagster hands SIGINT's ignore on to SIGTERM: the reason for sigterm_kept.
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        signal.signal(signal.SIGTERM, sigterm)
        with sigterm_kept():
            _tiny.execute_in_process()
        assert signal.getsignal(signal.SIGTERM) == sigterm
    finally:
        signal.signal(signal.SIGINT, sigint)
        signal.signal(signal.SIGTERM, sigterm)
