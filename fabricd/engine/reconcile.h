/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/reconcile.h - observe the kernel, diff against the desired state, plan,
 * apply. The kinds (kinds/bridge.c, kinds/vxlan.c, kinds/fdb.c, kinds/ifaddr.c, kinds/fabric.c)
 * each contribute their part of the diff and execute their own ops.
 */
#ifndef FABRICD_RECONCILE_H
#define FABRICD_RECONCILE_H

#include <stdbool.h>

#include "definition/desired.h"
#include "base/diag.h"
#include "kinds/fdb.h"
#include "kinds/guard.h"
#include "kinds/ifaddr.h"
#include "kinds/link.h"
#include "netlink/nl.h"
#include "engine/plan.h"
#include "wireguard/wg.h"
#include "engine/observe.h"
#include "engine/frr.h"

struct reconcile {
	struct nl_sock *rtnl; /* the process's rtnetlink socket (nl_route_shared) */
	enum wg_backend backend;
	bool have_key;
	uint8_t private_key[WG_KEY_LEN];
	/*
	 * Preshared keys per node index, from --psk-dir. Only with psk_managed
	 * does fabricd set or clear them; otherwise it leaves them as they are.
	 */
	bool psk_managed;
	size_t n_psk;
	uint8_t (*psk)[WG_KEY_LEN];
	uint8_t public_key[WG_KEY_LEN];
	char owner[80];
	unsigned int grace; /* seconds an old VXLAN device keeps receiving */
	/*
	 * --end-grace: the zones (comma-separated) whose switches have no grace
	 * period, as --grace 0 has every zone's (engine/switch.c: switch_grace)
	 */
	const char *end_grace;
	long long now; /* wall clock of this pass (the retire note's deadline for people) */
	long long
	    boot_now; /* CLOCK_BOOTTIME s of this pass: retire deadlines, steps do not move it */
	/* CLOCK_MONOTONIC ms when the kernel's state was read: FRR's answers after it saw it */
	double observed_ms;

	/* --frr-pathspace: FRR daemons started with -N NAME; NULL = the host's */
	const char *frr_pathspace;
	/*
	 * The daemon lets WireGuard roam: an existing peer's endpoint is set only
	 * when the definition's endpoint for it changed (endpoint_moved[node
	 * index]) or the peer has none, never because the kernel's differs (it
	 * learned it from an authenticated packet). Off for a one-shot apply.
	 */
	bool roaming;
	/*
	 * The daemon: a fabric device whose WireGuard state cannot be read (a
	 * stopped or hung wireguard-go) keeps its settings and peers as they
	 * are, and the rest of the node is planned; otherwise that is a
	 * conflict that stops every change (a one-shot apply, plan, status).
	 */
	bool wg_unread_ok;
	/*
	 * The daemon after its first pass: a vnet whose own names or VNI
	 * another owner holds is left as it is (held, one flag per vnet of the
	 * plan's want, owned), the rest of the node planned, where holdable
	 * allows (a new definition: only vnets the one in force has as they
	 * are); otherwise any conflict stops every change.
	 */
	bool hold_conflicting_vnets;
	bool *holdable; /* NULL: every vnet may be; else one flag per vnet (owned) */
	bool *held;
	size_t n_held; /* vnets held in the last plan_build */
	size_t n_endpoint_moved;
	bool *endpoint_moved; /* owned; freed by reconcile_close */
	/* the daemon: vnets its last pass found converged, left out if unchanged (converged.h) */
	const struct converged *converged;
};

/* Takes the process's rtnetlink socket (opened on first use, kept). 0 or -errno. */
int reconcile_open(struct reconcile *r, const char *owner, enum wg_backend backend);
/* Wipes the key. */
void reconcile_close(struct reconcile *r);

/*
 * Diffs the desired state against the observed one. Conflicts (a wanted name
 * held by a link fabricd does not own, a foreign VXLAN device on a wanted VNI)
 * go to diag, and then nothing may be applied.
 */
int plan_build(struct reconcile *r, const struct node_state *want, const struct observed *have,
	       struct plan *p, struct diag *diag);
/* Every owned object, for `down`. */
int plan_build_down(struct reconcile *r, const struct observed *have, struct plan *p);

/* Runs the plan phase by phase; logs each failure with its object. 0 or the first error. */
int plan_apply(struct reconcile *r, struct plan *p);
/*
 * After plan_apply failed: whether every op that failed did so only because
 * its link is gone (ENODEV, and no link has its index or name now). The
 * kernel deletes a VXLAN bridge port in steps under one lock: its flood
 * entries' removals are notified some 13 ms before the link's (longer on a
 * busy host), and a pass that began in between planned them back onto a link
 * that was about to go. Such a pass was overtaken, not failed.
 */
bool plan_failed_on_vanished_links(const struct plan *p);
/* Runs one OP_WG_* op through the backend. 0 or -errno (logged). */
int fabric_apply(struct reconcile *r, struct op *op);

#endif
