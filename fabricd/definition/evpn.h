/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/evpn.h - who takes part in the BGP EVPN control plane: the
 * nodes of EVPN zones, and among them the route reflectors. Pure.
 */
#ifndef FABRICD_EVPN_H
#define FABRICD_EVPN_H

#include <stdbool.h>

#include "definition/model.h"

/* Whether node idx is a member of at least one EVPN zone (it then runs BGP). */
bool evpn_node_speaks(const struct cluster *c, size_t idx);

/* Whether node idx is named in fabric.evpn.route_reflectors. */
bool evpn_is_reflector(const struct cluster *c, size_t idx);

/* Whether the two nodes should have a BGP session (full mesh, or reflector <-> any). */
bool evpn_peers(const struct cluster *c, size_t a, size_t b);

#endif
