/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/session.h - one pass of a node command: the definition, this node's desired
 * state, the kernel's observed state and the plan between them. Shared by
 * plan/apply/down, status and the daemon.
 */
#ifndef FABRICD_SESSION_H
#define FABRICD_SESSION_H

#include <stdbool.h>

#include "engine/options.h"
#include "definition/desired.h"
#include "engine/plan.h"
#include "engine/reconcile.h"

/*
 * Loads and validates o->config (with --sdn-dir: Proxmox's deployed SDN
 * configuration, definition/pve_load.h), printing every problem; 0 or -1.
 * For a report (render): its error does not say "nothing was changed".
 */
int session_load_cluster(const struct options *o, struct cluster **out);

/* The node named by -n, or the one named like this host; prints why not. 0 or -1. */
int session_find_self(const struct options *o, const struct cluster *c, size_t *self);
/*
 * The node a command is for: -n NODE, or this host's node name (into host,
 * len bytes). NULL, logged, when there is none.
 */
const char *session_node_name(const struct options *o, char *host, size_t len);

struct session {
	struct cluster *cluster;
	bool borrowed; /* the cluster belongs to the caller (the daemon's last good definition) */
	size_t self;   /* the node in the definition (unless departed) */
	char node[FABRICD_NAME_MAX + 1];
	bool departed;	  /* down: the node is not in the definition (it left) */
	bool report_only; /* status: planned to be shown, never applied */
	struct reconcile r;
	struct node_state want;
	struct observed have;
	struct plan plan;
	const char *ifupdown_file;  /* options.ifupdown_file */
	struct obs_view *view;	    /* the daemon's kept view (engine/view.h), or NULL */
	double observe_ms, plan_ms; /* the last session_plan's two parts, for --verbose */
	/* the daemon's vnets found converged (engine/converged.h), with the view; or NULL */
	struct converged *converged;
	/* the daemon's definition in force, whose vnets' conflicts hold them alone; or NULL */
	const struct cluster *in_force;
	/* session_plan's conflicts (a wanted name held by a link fabricd does not own, ...) */
	struct diag conflicts;
	/* --wg-backend kernel or userspace: what it chose (an existing device must be one) */
	bool backend_explicit;
	enum wg_backend chosen_backend;
};

/* Loads the definition, finds the node, picks the backend, opens netlink. 0 or -1 (logged). */
int session_open(struct session *s, const struct options *o);
/*
 * The same for down: when a zone follows Proxmox ("pve_zone") and
 * .running-config cannot be read or is broken, a warning, and the zones keep
 * what the definition file lists (down removes what fabricd owns: no vnet needed).
 */
int session_open_down(struct session *s, const struct options *o);
/*
 * The same for status, which reports whatever it finds: no WireGuard to use
 * (no module, no wireguard-go) is a warning, not an error, as for down.
 */
int session_open_report(struct session *s, const struct options *o);
/* The same with a definition already loaded; c must outlive the session. */
int session_open_cluster(struct session *s, const struct options *o, struct cluster *c);
/*
 * Loads the private key from --key-file (when private_key; checked against
 * the definition) and the preshared keys from --psk-dir. 0 or -1 (logged).
 */
int session_load_keys(struct session *s, const struct options *o, bool private_key);
/*
 * Whether --key-file holds this node's key, as apply needs it; when not, a
 * conflict (s->conflicts) saying why and what to do. For status: 0 or -1.
 */
int session_check_private_key(struct session *s, const struct options *o);
/*
 * The same for the daemon, both keys from keys (definition/keyfile.h), which
 * it keeps across passes: a file is read again only when it changed. The
 * preshared keys of peers no longer in the definition are forgotten.
 */
struct keyfile_store;
int session_load_keys_kept(struct session *s, const struct options *o, struct keyfile_store *keys);
/*
 * The daemon: plan from its kept view v (engine/view.h) instead of reading
 * the kernel in full, and leave out the vnets c knows converged and nothing
 * changed for (engine/converged.h; c may be NULL); a fabric device whose
 * WireGuard state cannot be read holds back nothing else (reconcile.h,
 * wg_unread_ok), nor does a vnet whose names another owner holds, where
 * in_force (the definition in force, or NULL: no holding) has it as the
 * session's definition does (reconcile.h, hold_conflicting_vnets); after
 * session_open_cluster. Returns 0.
 */
struct obs_view;
int session_use_view(struct session *s, struct obs_view *v, struct converged *c,
		     const struct cluster *in_force);
/* Observes the kernel, builds the desired state and the plan. 0 or -1 (logged). */
int session_plan(struct session *s);
/*
 * Plans again from scratch: the kernel read anew (a stale view's guard
 * counters are carried over). 0 or -1 (logged).
 */
int session_replan(struct session *s);
/* Applies the plan and prints the one-line summary, "VERB NODE: ...". 0 or -1 (logged). */
int session_apply(struct session *s, const char *verb);
/*
 * After session_plan failed on conflicts (a wanted name held by a foreign
 * link, an unreadable fabric device): applies the plan's guard repair alone
 * (op.guard_repair), so the node never waits out a conflict without its
 * guard; the guard only drops. 1 when it repaired, 0 when there was none,
 * -1 when it failed (logged).
 */
int session_repair_guard(struct session *s);
/*
 * After a pass (applied or empty): wg_tune() for the fabric device, only when
 * it is fabricd's, observed as its own (or adopted) or made by this plan; a
 * foreign one's wireguard-go is left as it is.
 */
void session_tune_fabric(const struct session *s, unsigned int wait_ms);
void session_free(struct session *s);

/* apply in one call: open, keys, plan, apply, free. 0 or -1 (logged). */
int session_apply_once(const struct options *o);

#endif
