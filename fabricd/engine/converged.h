/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * converged.h - the daemon's memory of which vnets its last pass found
 * converged, so that a pass after a small change plans only the vnets whose
 * definition or kernel objects changed since (README, "Scale"): at 1024
 * vnets planning every one costs 5-6 ms of a pass that should take a few.
 *
 * A vnet is left out of a pass only when all of this holds, and planned
 * otherwise: the last pass planned every vnet (but those a conflict held,
 * which are planned each pass) and changed nothing; the view
 * kept its links and FDB entries since (no full read, no lost
 * notifications), and none of the vnet's links or flood lists was named by
 * a notification; its desired state (name, VNI, devices, ports, addresses,
 * MTU, members, roles) is the same as then; its bridge and VXLAN devices
 * exist and are fabricd's; it is in no transport switch (no stage note, no
 * plain device retiring), no EVPN zone, no existing bridge, no takeover.
 * The guard, the fabric device and the removals are planned in full every
 * pass, and the view reads everything again every 60 s.
 */
#ifndef FABRICD_ENGINE_CONVERGED_H
#define FABRICD_ENGINE_CONVERGED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/view.h"

struct reconcile;
struct node_state;
struct desired_vnet;
struct observed;

struct converged {
	uint64_t *sums; /* sorted: the fingerprints of the vnets last found converged */
	size_t n;
	/* this pass's view: what it read again (changes_known, pass_changed), or NULL */
	const struct obs_view *view;
	/*
	 * This pass's desired vnets and their fingerprints as computed (0: not
	 * yet): converged_skips and converged_record of one pass sum each vnet
	 * once (64,512 flood entries at 1024 vnets: a tenth of a pass's CPU).
	 */
	const struct desired_vnet *pass_vnets;
	uint64_t *pass_sums;
	size_t pass_n;
};

void converged_init(struct converged *c);
void converged_free(struct converged *c);
/* Nothing is known to be converged: the next pass plans every vnet. */
void converged_forget(struct converged *c);
/*
 * Every vnet of want was planned, but those r holds (a conflict), and nothing
 * needed a change. 0 or -ENOMEM (forgotten).
 */
int converged_record(struct converged *c, const struct reconcile *r, const struct node_state *want);
/* This pass's view, whose observe says which kernel objects it read again. */
void converged_note_changes(struct converged *c, const struct obs_view *v);
/* This pass's desired state (after desired_build): its fingerprints are kept for the pass. */
void converged_note_want(struct converged *c, const struct node_state *want);
/* Whether planning v may be left out this pass (see above). */
bool converged_skips(const struct converged *c, const struct reconcile *r,
		     const struct desired_vnet *v, const struct observed *have);

#endif
