/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/fdb_learned.h - a remote that goes takes the MACs learned behind it. */
#ifndef FABRICD_FDB_LEARNED_H
#define FABRICD_FDB_LEARNED_H

#include "engine/plan.h"
#include "netlink/nl.h"

/*
 * After the plan's FDB phase: on each device the plan removed all-zeros
 * remotes from (OP_FDB_DEL that did not fail), deletes the entries the device
 * learned to those remotes. Best effort: an entry that aged out meanwhile, or
 * a device that went, is no error.
 */
void fdb_forget_learned(struct nl_sock *s, const struct plan *p);

#endif
