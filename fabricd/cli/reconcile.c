// SPDX-License-Identifier: GPL-2.0-or-later
/* cli/reconcile.c - `plan`, `apply` and `down`: one node converging to its share. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/status_probe.h"
#include "engine/ifupdown.h"
#include "engine/lock.h"
#include "engine/reconcile.h"
#include "engine/session.h"
#include "definition/wgkey.h"
#include "wireguard/wg.h"

/* One change for programs: as plan_print's line, in fields (schemas/plan.schema.json). */
static json_t *op_json(const struct op *op)
{
	struct op_text t;

	op_describe(op, &t);
	return json_pack("{s:s, s:s, s:s}", "change", op_verb_word((enum op_verb)op->verb),
			 "object", t.object, "detail", t.detail);
}

static void plan_print_json(const struct session *s, FILE *f)
{
	json_t *now = json_array(), *later = json_array(), *j;

	for (size_t i = 0; i < s->plan.n; i++)
		json_array_append_new(now, op_json(&s->plan.ops[i]));
	for (size_t i = 0; i < s->plan.n_later; i++) {
		json_t *op = op_json(&s->plan.later[i]);

		json_object_set_new(op, "due_in_s", json_integer(s->plan.later[i].due_in));
		json_array_append_new(later, op);
	}
	j = json_pack("{s:s, s:s, s:b, s:o, s:o}", "cluster", s->cluster->name, "node",
		      s->cluster->nodes[s->self].name, "in_sync", !s->plan.n, "changes", now,
		      "later", later);
	json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(j);
}

/* Distinct other cluster names said at most: more would be a lab's leftovers. */
#define OTHER_CLUSTERS_MAX 8

/*
 * Links fabricd made for other cluster names: the definition's name changed
 * since (down removes only what its cluster owns). Says, for each name, how
 * many links and which command takes them.
 */
static void warn_other_clusters(const struct session *s, bool down)
{
	struct {
		char name[FABRICD_NAME_MAX + 1];
		size_t n;
	} other[OTHER_CLUSTERS_MAX];
	size_t n_other = 0, k;
	char name[FABRICD_NAME_MAX + 1];

	for (size_t i = 0; i < s->have.links.n; i++) {
		const struct link_obs *l = &s->have.links.links[i];

		if (link_is_owned(l, s->r.owner) ||
		    !owner_mark_cluster(link_alias(l), name, sizeof(name)))
			continue;
		for (k = 0; k < n_other && strcmp(other[k].name, name); k++)
			;
		if (k == n_other && n_other == OTHER_CLUSTERS_MAX)
			continue;
		if (k == n_other) {
			snprintf(other[k].name, sizeof(other[k].name), "%s", name);
			other[n_other++].n = 0;
		}
		other[k].n++;
	}
	for (k = 0; k < n_other; k++) {
		size_t n = other[k].n;
		const char *o = other[k].name;

		if (down)
			log_warn("down %s: %zu link%s here belong%s to cluster \"%s\", which this "
				 "down leaves (another definition's, or this one's before its name "
				 "changed): fabricd down --cluster %s removes them",
				 s->node, n, n == 1 ? "" : "s", n == 1 ? "s" : "", o, o);
		else /* the conflicts above: names held by what fabricd made under that name */
			log_error(
			    "%s: %zu link%s here belong%s to cluster \"%s\": if that was this "
			    "cluster's name before, run `fabricd down --cluster %s` (it removes "
			    "them), then apply",
			    s->node, n, n == 1 ? "" : "s", n == 1 ? "s" : "", o, o);
	}
}

/*
 * Without --psk-dir, the peers' preshared keys go (kinds/fabric.c): said, as
 * a forgotten option on one node parts it from every peer that keeps its key.
 */
static void warn_psks_removed(const struct session *s, const struct options *o, const char *command)
{
	size_t n = 0;

	for (size_t i = 0; !o->psk_dir && i < s->plan.n; i++) {
		const struct op *op = &s->plan.ops[i];

		n += op->type == OP_WG_PEER && (op->u.peer.flags & WGPEER_HAS_PRESHARED_KEY) &&
		     op->u.peer.psk && wgkey_is_zero(op->u.peer.psk);
	}
	if (n)
		log_warn("%s %s: %zu peer%s of %s lose%s %s preshared key: without --psk-dir "
			 "fabricd sets none; give --psk-dir DIR to keep them (a peer that keeps "
			 "its key cannot reach this node until it is applied without --psk-dir "
			 "too)",
			 command, s->node, n, n == 1 ? "" : "s", FABRIC_IFNAME, n == 1 ? "s" : "",
			 n == 1 ? "its" : "their");
}

int cmd_plan(const struct options *o)
{
	struct session s;
	int ret = 1;

	/*
	 * plan never waits for the node lock: it changes nothing. It reads the
	 * key as apply does: a key file apply would refuse is plan's error too.
	 */
	if (session_open(&s, o) < 0 || session_load_keys(&s, o, true) < 0)
		goto out;
	if (session_plan(&s) < 0) {
		if (s.conflicts.n)
			warn_other_clusters(&s, false);
		goto out;
	}
	ret = s.plan.n ? 2 : 0;
	warn_psks_removed(&s, o, "plan");
	if (o->json)
		plan_print_json(&s, stdout);
	else
		plan_print(&s.plan, stdout);
	if (!s.plan.n && !o->json)
		printf("%s: nothing to change\n", s.cluster->nodes[s.self].name);
out:
	session_free(&s);
	return ret;
}

/* The node lock for command, taken before the kernel is read: the plan must stay true. */
static int lock_node(struct node_lock *lock, const struct session *s, const struct options *o,
		     const char *command)
{
	return node_lock_take(lock, s->node, command, o->lock_wait * 1000U, false);
}

/* How long FRR's zebra is given to act on a reload, and how often (below). */
#define FRR_SETTLE_MS	  1000
#define FRR_SETTLE_ROUNDS 3

static bool plan_changes_frr(const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->ops[i].type == OP_FRR_CONFIG)
			return true;
	return false;
}

/*
 * FRR's zebra acts on a reload after frr-reload.py has returned: leaving
 * EVPN (or its sessions reset), it deletes the flood entries of every VXLAN
 * device whose VNI it advertised, fabricd's static zones' too. A one-shot
 * apply that changed FRR's part reads the kernel again once zebra had time,
 * and makes again what zebra undid (a daemon's next pass does so anyway).
 */
static int settle_after_frr(struct session *s)
{
	struct timespec pause = {.tv_sec = FRR_SETTLE_MS / 1000};

	if (!plan_changes_frr(&s->plan))
		return 0;
	for (int round = 0; round < FRR_SETTLE_ROUNDS; round++) {
		nanosleep(&pause, NULL);
		if (session_replan(s) < 0)
			return -1;
		if (!s->plan.n)
			return 0;
		log_info("apply %s: FRR's zebra changed the kernel after the reload (%zu change%s "
			 "to make again)",
			 s->node, s->plan.n, s->plan.n == 1 ? "" : "s");
		if (session_apply(s, "apply") < 0)
			return -1;
	}
	return 0;
}

int cmd_apply(const struct options *o)
{
	struct node_lock lock = {.fd = -1};
	struct session s;
	int ret = 1;

	if (session_open(&s, o) < 0 || lock_node(&lock, &s, o, "apply") < 0 ||
	    session_load_keys(&s, o, true) < 0)
		goto out;
	if (session_plan(&s) < 0) {
		if (s.conflicts.n)
			warn_other_clusters(&s, false);
		goto out;
	}
	warn_psks_removed(&s, o, "apply");
	if (session_apply(&s, "apply") == 0 && settle_after_frr(&s) == 0)
		ret = 0;
out:
	session_free(&s);
	node_lock_release(&lock);
	return ret;
}

/* How long down waits for a daemon that is stopping (a SIGTERM just sent). */
#define DOWN_DAEMON_WAIT_S 5

/*
 * A daemon follows the definition: what down removes, its next pass builds
 * again, with the guests' ports left on no bridge. Refused (-1) when one
 * that keeps down's cluster has not stopped within a few seconds (before the
 * node lock is taken: the daemon's passes go on meanwhile). One of another
 * cluster (down --cluster of a renamed cluster's leftovers) is said only.
 */
static int daemon_keeps(const struct session *s, const struct options *o)
{
	const char *mine = o->cluster_name ? o->cluster_name : s->cluster ? s->cluster->name : "";
	unsigned int wait_s = o->lock_wait < DOWN_DAEMON_WAIT_S ? o->lock_wait : DOWN_DAEMON_WAIT_S;
	char holder[128], theirs[64];

	if (!node_daemon_running(holder, sizeof(holder), theirs, sizeof(theirs)))
		return 0;
	/* one that names no cluster (a build before 2026-12-06) may keep down's: waited for */
	if (theirs[0] && strcmp(theirs, mine)) {
		log_warn("node %s: a daemon (pid and command: %s) keeps this node for cluster %s: "
			 "down removes only what cluster %s's fabricd owns",
			 s->node, holder[0] ? holder : "unknown", theirs, mine);
		return 0;
	}
	for (unsigned int waited_ms = 0; waited_ms < wait_s * 1000U; waited_ms += 100) {
		if (!waited_ms)
			log_info("down %s: waiting up to %u s for the daemon (pid and command: %s) "
				 "to stop",
				 s->node, wait_s, holder[0] ? holder : "unknown");
		nanosleep(&(struct timespec){.tv_nsec = 100 * 1000000L}, NULL);
		if (!node_daemon_running(holder, sizeof(holder), NULL, 0))
			return 0;
	}
	log_error("down %s: a daemon (pid and command: %s) keeps this node and would build "
		  "again what down removes, with the guests' ports left on no bridge; nothing "
		  "was changed: stop it first (systemctl stop fabricd), then run down",
		  s->node, holder[0] ? holder : "unknown");
	return -1;
}

int cmd_down(const struct options *o)
{
	struct node_lock lock = {.fd = -1};
	struct session s;
	int ret = 1;

	if (session_open_down(&s, o) < 0 || daemon_keeps(&s, o) < 0 ||
	    lock_node(&lock, &s, o, "down") < 0)
		goto out;
	if (observe(&s.r, &s.have) < 0) {
		log_error("cannot read the kernel's state");
		goto out;
	}
	if (plan_build_down(&s.r, &s.have, &s.plan) < 0)
		goto out;
	warn_other_clusters(&s, true);
	if (session_apply(&s, "down") == 0) {
		struct node_state none = {0};

		/* nothing left to keep: a file left would name ports that are gone */
		ret = ifupdown_sync(&none, o->ifupdown_file) < 0 ? 1 : 0;
		status_probes_forget(o, s.cluster ? s.cluster->name : o->cluster_name);
	}
out:
	session_free(&s);
	node_lock_release(&lock);
	return ret;
}
