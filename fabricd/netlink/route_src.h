/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netlink/route_src.h - the source address the kernel would use towards an address. */
#ifndef FABRICD_ROUTE_SRC_H
#define FABRICD_ROUTE_SRC_H

#include "base/addr.h"

/*
 * Asks the kernel for the route to dst (RTM_GETROUTE, as `ip route get`)
 * and returns its preferred source address in src. 0, -ENETUNREACH when
 * there is no route, -EADDRNOTAVAIL when the route names no source, or
 * -errno of the netlink request.
 */
int nl_route_source(const struct ip_addr *dst, struct ip_addr *src);

#endif
