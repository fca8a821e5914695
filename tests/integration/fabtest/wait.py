# SPDX-License-Identifier: GPL-2.0-or-later
"""wait_until(): poll for a condition instead of sleeping for a guess.

Kernel state converges in milliseconds, so the defaults are tight (5 s,
50 ms); a WireGuard handshake or ARP over the fabric takes a few hundred.
"""

import time


class WaitTimeout(AssertionError):
    """The condition did not hold within the timeout."""


def wait_until(fn, timeout=5.0, interval=0.05, what=None):
    """Call fn() until it returns a truthy value and return that value.

    An AssertionError raised by fn (which includes fabtest.CommandFailed)
    counts as "not yet", so fn may use plain asserts. Any other exception
    propagates at once. On timeout, raises WaitTimeout naming `what` (or fn)
    with the last value or assertion message, so the failure says what was
    seen, not only that time ran out.
    """
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        try:
            last = fn()
            if last:
                return last
            detail = f"last value: {last!r}"
        except AssertionError as e:
            detail = f"last failure: {e}"
        if time.monotonic() >= deadline:
            name = what or getattr(fn, "__name__", repr(fn))
            raise WaitTimeout(f"{name}: not true after {timeout} s ({attempts} attempts); {detail}")
        time.sleep(interval)
