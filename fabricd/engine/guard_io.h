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
/*
 * The nftables generation of this network namespace: every committed
 * transaction (any table's) moves it on, so a table read at one generation is
 * as read while it stays. 0 or -errno.
 */
int firewall_generation(uint32_t *gen);

/*
 * Records the rules of the table as the kernel has them now (just written
 * by fabricd) as their prints (engine/guard_prints.h). 0 or -errno.
 */
int firewall_learn_prints(void);
/* Runs an OP_FIREWALL_* op. 0 or -errno (logged here with nft's own words). */
int firewall_apply(struct op *op);

/*
 * A delta (kinds/guard.c: FIREWALL_DELTA_MARK, then "add element inet fabricd
 * SET { ... }" and "delete element ..." lines) as one nftables transaction
 * over netlink (engine/guard_delta.c). 0 done; 1 not sent (a line of another
 * shape, or more elements than one send holds): libnftables must run it;
 * -errno the kernel refused it and nothing changed (err says why).
 */
int firewall_delta_send(const char *text, char *err, size_t errlen);
/*
 * The same for a new table's chunk of set elements (kinds/guard_render.c,
 * firewall_load_steps: "add element" lines without the mark), up to 2,048
 * elements in one transaction. 0, 1 or -errno as firewall_delta_send.
 */
int firewall_load_send(const char *text, char *err, size_t errlen);

#endif
