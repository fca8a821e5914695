/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kinds/bridge.h - the Linux bridge of a vnet, named after it, at the zone MTU. */
#ifndef FABRICD_BRIDGE_H
#define FABRICD_BRIDGE_H

#include "definition/desired.h"
#include "kinds/link.h"
#include "engine/plan.h"

/* RTM_NEWLINK body creating bridge name, down, with MTU (alias and up follow separately). */
void bridge_put_create(struct nlmsghdr *nlh, const char *name, unsigned int mtu);

/*
 * bridge_kind (kinds/kind.h) plans the bridge of vnet in->vnet given the
 * link of that name, in->link (NULL: absent, owned otherwise).
 */

#endif
