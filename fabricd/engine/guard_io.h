/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/guard_io.h - reading the nftables guard (netlink, engine/guard_nl.c) and changing it
 * (libnftables, engine/guard_io.c). */
#ifndef FABRICD_GUARD_IO_H
#define FABRICD_GUARD_IO_H

#include "engine/plan.h"
#include "kinds/guard.h"

/* Reads the table; *out NULL when it does not exist. 0 or -errno. */
int firewall_observe(struct firewall_obs **out);
/*
 * The same, but only the table's comment and counters: what the metrics
 * need every second, without dumping tens of thousands of set elements.
 */
int firewall_observe_counters(struct firewall_obs **out);

/* Runs an OP_FIREWALL_* op. 0 or -errno (logged here with nft's own words). */
int firewall_apply(struct op *op);

#endif
