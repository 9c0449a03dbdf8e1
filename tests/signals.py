"""Children a test will stop with a signal start with the stopping signals at their defaults.

Whoever started the test run may ignore SIGINT and SIGHUP (``nohup``, a job started with ``&``
by a non-interactive shell, some CI runners), and an ignored signal is inherited. fixturegen
deliberately keeps a signal ignored that was ignored when it started (``nohup fixturegen ...``
goes on), so a test that checks what a signal does must give its child the default
dispositions, as a terminal would; ``test_a_signal_ignored_at_start_stays_ignored`` checks the other
case on purpose.
"""

from __future__ import annotations

import signal


def default_signals() -> None:
    """``preexec_fn``: SIGINT, SIGTERM and SIGHUP as a terminal gives them."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
