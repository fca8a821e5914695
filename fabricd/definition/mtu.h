/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/mtu.h - the MTU rules of DESIGN.md, as pure functions.
 *
 * WireGuard adds 60 bytes over IPv4 and 80 over IPv6 (outer IP + UDP 8 +
 * header 16 + tag 16); VXLAN adds 50 over IPv4 and 70 over IPv6 (outer IP +
 * UDP 8 + VXLAN 8 + inner Ethernet 14).
 */
#ifndef FABRICD_MTU_H
#define FABRICD_MTU_H

#include <stdbool.h>

#include "definition/model.h"

#define MTU_IPV6_MIN 1280 /* below this a zone cannot carry IPv6 inside */
#define MTU_MIN	     576  /* the smallest underlay MTU fabricd accepts */
#define MTU_MAX	     65535

unsigned int mtu_wg_overhead(int family);
unsigned int mtu_vxlan_overhead(int family);

struct mtu_plan {
	unsigned int underlay;	 /* underlay MTU the figures derive from */
	unsigned int fabric;	 /* WireGuard device */
	unsigned int plain_max;	 /* largest guest MTU over plain VXLAN */
	unsigned int secure_max; /* largest guest MTU over VXLAN in WireGuard */
};

/*
 * underlay_family: family of the underlay (for VXLAN overhead); wg_family: the
 * family whose WireGuard overhead applies (AF_INET6 when any peer endpoint is
 * IPv6); fabric_family: family of the fabric prefix. Returns -EINVAL when the
 * underlay MTU is too small to leave a positive MTU.
 */
int mtu_plan_compute(unsigned int underlay_mtu, int underlay_family, int wg_family,
		     int fabric_family, struct mtu_plan *out);

/*
 * The zone's guest MTU under its policy: stable = min(plain, secure); max =
 * the maximum of its current transport. A zone "mtu" override lowers it.
 * Returns the computed MTU before the override in *computed (may be NULL).
 */
unsigned int mtu_zone(const struct mtu_plan *p, const struct zone *z, unsigned int *computed);
/* The same, as if the zone's transport were transport. */
unsigned int mtu_zone_as(const struct mtu_plan *p, const struct zone *z, enum transport transport,
			 unsigned int *computed);

#endif
