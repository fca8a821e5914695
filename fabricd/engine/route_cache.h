/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/route_cache.h - the routes VXLAN devices keep for their remotes, made stale. */
#ifndef FABRICD_ROUTE_CACHE_H
#define FABRICD_ROUTE_CACHE_H

#include "definition/desired.h"

/*
 * Marks every route the namespace's sockets and tunnels cached as stale
 * (`ip route flush cache`, IPv4 and IPv6): each is looked up again at its next
 * packet. A VXLAN device keeps the route to each FDB entry's remote, and
 * FRR's zebra moving a MAC's VTEP while traffic flows (a peer's switch to
 * secure moves it from the underlay to the fabric address) can leave the old
 * route in use (seen on a 6.18 kernel), sending a secure zone's frames
 * out of the underlay link, where the guard drops them, for good.
 * Best effort.
 */
void route_cache_flush(void);
/* route_cache_flush() on a node that runs EVPN (zebra changes remotes under it). */
void route_cache_refresh(const struct node_state *want);
/* The same for node (by name) of c: the daemon, on zebra's notifications. */
void route_cache_refresh_node(const struct cluster *c, const char *node);

#endif
