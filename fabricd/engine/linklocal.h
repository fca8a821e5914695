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

/*
 * Before an IPv6 address goes on a link (op: OP_ADDR_ADD): IPv6 turned off
 * on it (net.ipv6.conf.DEV.disable_ipv6 1, by hand, or from
 * net.ipv6.conf.default when the link was made on a host that disables IPv6
 * by sysctl) makes the kernel refuse the address (EACCES), and an IPv6
 * fabric is cut. It is turned on again, as `sysctl -w` does: no netlink
 * request sets it (the kernel takes no IFLA_INET6_CONF). Logged; a write
 * that fails is logged with what to do, and the address add then says why.
 */
void linklocal_ipv6_on(const struct op *op);

#endif
