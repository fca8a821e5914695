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


def stays_true(fn, seconds, interval=0.05, what=None):
    """Assert that fn() stays truthy for a whole window of `seconds`.

    The negative assertion over time ("nothing more is logged", "no packet
    arrives"): fn is polled, and the first falsy value fails at once with
    what was seen, instead of sleeping for the window and looking once.
    """
    deadline = time.monotonic() + seconds
    while True:
        last = fn()
        if not last:
            name = what or getattr(fn, "__name__", repr(fn))
            raise AssertionError(f"{name}: stopped holding within {seconds} s; last value: {last!r}")
        if time.monotonic() >= deadline:
            return last
        time.sleep(interval)


def wait_quiet(fn, quiet=0.3, timeout=5.0, interval=0.02, what=None):
    """Poll fn() until its value has not changed for `quiet` seconds; return that value.

    For "whatever was going to happen has happened": a capture file that
    stopped growing, a log that stopped moving. Fails after timeout.
    """
    deadline = time.monotonic() + timeout
    last = fn()
    since = time.monotonic()
    while True:
        time.sleep(interval)
        now = fn()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
        if time.monotonic() >= deadline:
            name = what or getattr(fn, "__name__", repr(fn))
            raise WaitTimeout(f"{name}: still changing after {timeout} s; last value: {now!r}")
