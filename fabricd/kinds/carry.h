/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/carry.h - the route that carries a secure EVPN vnet's VXLAN into
 * WireGuard whatever its destination (engine/switch.c: while a zone
 * switches, some VTEPs are still underlay addresses): the guard marks those
 * packets (CARRY_MARK under CARRY_MARK_MASK), a policy rule per family (the
 * underlay's and the fabric prefix's) sends marked packets to table
 * CARRY_TABLE, whose default route is the fabric device, and WireGuard
 * takes them to the peer whose allowed IPs hold their destination (each
 * peer of an EVPN zone has its underlay address there too). The fabric
 * device then receives VXLAN from underlay addresses, so its IPv4
 * reverse-path filter is loose.
 *
 * Kept while the node has an EVPN vnet, whatever its transport: a switch
 * then needs only the guard's mark and the VTEP's change, and a peer that
 * switches first is received.
 */
#ifndef FABRICD_CARRY_H
#define FABRICD_CARRY_H

#include <stdbool.h>

#define CARRY_MARK	0xfab0U
#define CARRY_MARK_MASK 0xffffU
#define CARRY_TABLE	64176U /* 0xfab0 */
#define CARRY_RULE_PREF 4011U
/* the routing protocol number fabricd's rule and route carry (`ip rule` shows "proto 250") */
#define CARRY_PROTO 250U
/* loose: what arrives through WireGuard has the sender's underlay address */
#define CARRY_RP_FILTER 2

/* What the kernel has of it (engine/observe.c dumps rules, the table's routes, netconf). */
struct carry_obs {
	bool rule[2];	    /* fabricd's rule, [0] IPv4, [1] IPv6 */
	bool route[2];	    /* a default route in CARRY_TABLE through the fabric device */
	int rp_filter;	    /* the fabric device's IPv4 rp_filter, -1 when not read */
	int fabric_ifindex; /* the device the rp_filter and routes were read for (0: none) */
};

void carry_obs_init(struct carry_obs *c, int fabric_ifindex);

struct plan;
/* down: removes fabricd's rules (the route and the setting go with the fabric device). */
int carry_plan_down(const struct carry_obs *have, struct plan *p);

#endif
