# SPDX-License-Identifier: GPL-2.0-or-later
"""A randomized walk of definition edits: incremental apply against a fresh one.

For fixed seeds, each step draws 1 to 3 edits (fabtest/walk.py lists them),
applies the definition on the walk cluster on top of the previous steps (in
a random node order, `--grace 0`) and from empty on the oracle cluster, and
checks that the kernel states match, `plan` is empty, and guests see what
they should (and the underlay no clear text). A failure prints the seed,
the step, its edits and the definition, so it reproduces:
`FABTEST_WALK="SEED:STEPS:FAMILY" pytest ... -k test_walk` runs another walk.

Found with it: a node whose route to a peer picks a source address other
than its underlay address (test_underlay_source.py); the walk pins the
routes' source, as that warning says to.
"""

import json
import os
import random
import time

import pytest

from fabtest.walk import State, World, next_definition

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan, pytest.mark.slow]

WALKS = [(7, 12, 4), (8, 12, 6)]  # (seed, steps, underlay family): about 25 s each


def walks():
    custom = os.environ.get("FABTEST_WALK")
    if custom:
        return [tuple(int(x) for x in custom.split(":"))]
    return WALKS


@pytest.mark.parametrize("seed,steps,family", walks())
def test_walk(make_cluster, seed, steps, family):
    world = World(make_cluster(3, family=family), make_cluster(3, family=family))
    rnd = random.Random(seed)
    st = State()
    for k in range(steps):
        st, edits = next_definition(world, st, rnd)
        started = time.monotonic()
        problems = world.step(st, rnd)
        print(f"seed {seed} step {k}: {edits} ({time.monotonic() - started:.1f} s)")
        assert not problems, (
            f"seed {seed} family {family} step {k}: {edits}\n  " + "\n  ".join(problems)
            + "\ndefinition: " + json.dumps(st.definition(world.walk)) + f" psk {st.psk}")
