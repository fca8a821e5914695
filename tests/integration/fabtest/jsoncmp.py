# SPDX-License-Identifier: GPL-2.0-or-later
"""json_subset(): does `actual` contain everything `expected` says?

Rules (as FRR topotests' json_cmp):
  - dict: every key of expected must be in actual with a matching value;
    keys of actual that expected does not name are ignored. An expected
    value of None means "this key must be absent (or null)".
  - list: every expected element must match a different element of actual,
    in any order; extra actual elements are ignored.
  - the string "*" matches any value that is present.
  - anything else compares with ==.

    >>> json_subset({"mtu": 1390, "linkinfo": {"info_kind": "bridge"}}, link)
    []                                  # match: an empty list of differences
"""

import json

ANY = "*"


def json_subset(expected, actual, path="$"):
    """Return a list of differences ("<json path>: <what>"); empty = match."""
    if isinstance(expected, str) and expected == ANY:
        return []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {_short(actual)}"]
        diffs = []
        for key, want in expected.items():
            sub = f"{path}.{key}"
            if want is None:
                if actual.get(key) is not None:
                    diffs.append(f"{sub}: expected absent, got {_short(actual[key])}")
            elif key not in actual:
                diffs.append(f"{sub}: missing (expected {_short(want)})")
            else:
                diffs.extend(json_subset(want, actual[key], sub))
        return diffs
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {_short(actual)}"]
        if _match_list(expected, actual, path):
            return []
        # say which expected elements have no match at all, for a readable error
        unmatched = [
            f"{path}[{i}]: no element matches {_short(want)}"
            for i, want in enumerate(expected)
            if not any(not json_subset(want, have) for have in actual)
        ]
        return unmatched or [f"{path}: elements match only by reusing one actual element"]
    if isinstance(expected, bool) or isinstance(actual, bool):
        ok = expected is actual
    else:
        ok = expected == actual
    return [] if ok else [f"{path}: expected {_short(expected)}, got {_short(actual)}"]


def _match_list(expected, actual, path):
    """Assign each expected element a distinct matching actual one (backtracking)."""
    candidates = [
        [j for j, have in enumerate(actual) if not json_subset(want, have)] for want in expected
    ]
    used = set()

    def assign(i):
        if i == len(expected):
            return True
        for j in candidates[i]:
            if j not in used:
                used.add(j)
                if assign(i + 1):
                    return True
                used.discard(j)
        return False

    return assign(0)


def assert_json_subset(expected, actual, what="value"):
    """Assert json_subset() finds no difference; the message lists them all."""
    diffs = json_subset(expected, actual)
    if diffs:
        raise AssertionError(
            f"{what} does not match:\n  "
            + "\n  ".join(diffs)
            + f"\nactual: {_short(actual, 2000)}"
        )


def _short(value, limit=200):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
