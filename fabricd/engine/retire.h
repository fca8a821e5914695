/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/retire.h - the receive-only stage of a VXLAN device that a vnet has left.
 *
 * After a transport switch the old device stays in the bridge until its
 * retire deadline (engine/reconcile.c). In the first half of the grace period it
 * still carries the unicast its learned bridge entries point at, which keeps
 * traffic flowing to peers that have not switched yet. From half way, when
 * every node has switched (if they noticed the change within grace/2 of each
 * other), its bridge port turns receive-only: learning and flooding off and
 * its learned entries flushed. The bridge then sends everything through the
 * new device, the peers learn the new path from that traffic, and what they
 * still send the old way is received. When the old device is deleted nothing
 * uses it any more, so the switch loses nothing.
 *
 * Measured without this stage: one ping in two lost (100/s both ways) when
 * the first node deletes its old device, because the peers still send to it
 * along entries they learned from it.
 *
 * So the grace period must cover the spread between the nodes noticing the
 * change twice over, plus two seconds because deadlines are whole seconds:
 * the default 30 s allows for nodes that switch up to 14 s apart.
 */
#ifndef FABRICD_RETIRE_H
#define FABRICD_RETIRE_H

#include "engine/reconcile.h"

/*
 * Makes the ports of owned, retiring VXLAN devices receive-only once half of
 * grace is left before their deadline, and gives a port that is wanted again
 * (switched back in time) its learning and flooding back. Returns the number
 * of ports changed, or -errno. *wake: the earliest epoch second at which a
 * device needs the next step (receive-only, or deletion by the planner), 0
 * when none does.
 */
int retire_ports(struct reconcile *r, const struct observed *have, unsigned int grace,
		 long long *wake);

#endif
