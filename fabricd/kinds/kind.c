// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/kind.c - the table of kinds, by the id an op records. */
#include "kinds/kind.h"

static const struct kind *const by_id[KIND_COUNT] = {
    [KIND_LINK] = &link_kind,	[KIND_BRIDGE] = &bridge_kind, [KIND_VXLAN] = &vxlan_kind,
    [KIND_FDB] = &fdb_kind,	[KIND_IFADDR] = &ifaddr_kind, [KIND_FABRIC] = &fabric_kind,
    [KIND_GUARD] = &guard_kind, [KIND_FRR] = &frr_kind,	      [KIND_CARRY] = &carry_kind,
};

const struct kind *kind_by_id(unsigned int id)
{
	return id < KIND_COUNT ? by_id[id] : NULL;
}
