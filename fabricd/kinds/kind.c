// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/kind.c - which kind encodes which op. */
#include "kinds/kind.h"

static const struct kind *const by_op[] = {
    [OP_BRIDGE_CREATE] = &bridge_kind, [OP_VXLAN_CREATE] = &vxlan_kind,
    [OP_LINK_CHANGE] = &link_kind,     [OP_LINK_DELETE] = &link_kind,
    [OP_FDB_ADD] = &fdb_kind,	       [OP_FDB_DEL] = &fdb_kind,
    [OP_ADDR_ADD] = &ifaddr_kind,      [OP_ADDR_DEL] = &ifaddr_kind,
};

const struct kind *kind_for_op(enum op_type t)
{
	return (size_t)t < sizeof(by_op) / sizeof(by_op[0]) ? by_op[t] : NULL;
}
