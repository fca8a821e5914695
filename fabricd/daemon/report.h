/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - what `fabricd run` logs: one short line per thing that
 * changed and why ("zone red: transport plain -> secure (definition
 * changed)", "vxlan vx100: recreated (drift: missing)"). Each kernel change
 * on its own is shown with --verbose (plan_apply logs it).
 */
#ifndef FABRICD_DAEMON_REPORT_H
#define FABRICD_DAEMON_REPORT_H

#include <stddef.h>

#include "definition/desired.h"
#include "definition/model.h"
#include "engine/plan.h"

/* Why a pass runs; a pass may have several reasons. */
enum pass_reason {
	REASON_STARTUP = 1U << 0,
	REASON_DEFINITION = 1U << 1, /* a new definition was accepted for this pass */
	REASON_KERNEL = 1U << 2,     /* a netlink notification */
	REASON_PEERS = 1U << 3,	     /* the periodic WireGuard check found a difference */
	REASON_RETIRE = 1U << 4,     /* a switch stage's deadline is due (engine/switch.c) */
	REASON_RETRY = 1U << 5,	     /* the last pass failed */
	REASON_SETTLE = 1U << 6,     /* re-read after a pass that changed something */
	/* the underlay MTU measured in this pass differs from the last pass's (report_mtus) */
	REASON_UNDERLAY = 1U << 7,
};

/* For --verbose: the names of reasons, "kernel, settle", into buf. */
const char *report_reason_names(unsigned int reasons, char *buf, size_t len);

/* Logs one line per difference between two definitions; returns how many. */
size_t report_definition(const struct cluster *old, const struct cluster *new);

/*
 * Logs the changes of a plan just applied, as far as reasons call for it:
 * the ops that were done (a failed one was logged as it failed; one not
 * tried after a failure is not said to be done).
 */
void report_plan(const struct plan *p, unsigned int reasons);
/*
 * Whether op only follows the underlay's MTU (REASON_UNDERLAY and an MTU
 * change alone): the node adapting, not drift to repair or count.
 */
bool report_follows_underlay(const struct op *op, unsigned int reasons);
/*
 * A pass for a switch stage that fell due: its changes are the stage's, not
 * repairs. With kernel changes beside it they may be either, except when a
 * failed stage pass is retried (its reasons carry what happened meanwhile).
 */
bool report_is_stage(unsigned int reasons);
/*
 * Whether op of plan p is a switch stage's, not a repair: every op of a
 * stage pass; in any pass (one for kernel changes may come after a stage's
 * deadline, before its timer), those planned for a vnet whose stage ended
 * (op.stage_end), and the guard's beside them.
 */
bool report_op_is_stage(const struct plan *p, const struct op *op, unsigned int reasons);

/*
 * The one-line summary after a successful apply, for a new definition, the
 * start or a retry: "pve1: 2 created, 2 changed, 1 removed (definition
 * changed)". Drift repairs were reported change by change.
 */
void report_applied(const struct plan *p, const char *node, unsigned int reasons);

/* Each zone's MTU as last reported. */
struct zone_mtu {
	char name[FABRICD_NAME_MAX + 1];
	unsigned int mtu;
};

struct zone_mtus {
	struct zone_mtu *mtus;
	size_t n;
	unsigned int underlay; /* the underlay MTU they were computed for (0: none yet) */
};

/*
 * Logs each zone whose MTU differs from known's, then makes w's MTUs the
 * known ones. REASON_UNDERLAY when the underlay MTU changed without a new
 * definition, else 0.
 */
unsigned int report_mtus(struct zone_mtus *known, const struct node_state *w,
			 const struct cluster *c, unsigned int reasons);

/* Page faults so far (every thread's): on a VM each costs microseconds (README, "Scale"). */
long report_minor_faults(void);
/* --verbose: where a pass's time went (README, "Scale"); times from clock_mono_ms(). */
struct session;
void report_pass_times(const struct session *s, double started, double loaded, double planned,
		       long faults);
/*
 * The daemon's status (sd_notify STATUS=) after a pass that converged to
 * the definition in force: counts, a held vnet or a silent wireguard-go.
 */
void report_converged(const struct session *s, bool def_invalid, char *buf, size_t len);

#endif
