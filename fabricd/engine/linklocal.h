/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/linklocal.h - the IPv6 link-local addresses the kernel gave fabricd's links anyway. */
#ifndef FABRICD_LINKLOCAL_H
#define FABRICD_LINKLOCAL_H

#include "engine/plan.h"
#include "netlink/nl.h"

/*
 * After a phase's link changes: on each link a change of this phase set
 * back to no IPv6 address generation (LINK_SET_NO_ADDRGEN on an existing
 * link, kinds/link.h link_addrgen_again), deletes the link-local addresses
 * the kernel made with its new IPv6 state: setting the mode keeps them.
 * Best effort: a link that went meanwhile is no error; a delete the kernel
 * refuses is logged.
 */
void linklocal_forget(struct nl_sock *s, const struct plan *p, int phase);

#endif
