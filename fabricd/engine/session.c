// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * session.c - one pass of a node command: load the definition, find the node,
 * choose the backend, read keys, observe, plan and apply. plan/apply/down,
 * status, the daemon and the bench all go through here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/log.h"
#include "base/util.h"
#include "definition/config.h"
#include "definition/pve_follow.h"
#include "definition/keyfile.h"
#include "definition/pve_corosync.h"
#include "definition/pve_import.h"
#include "definition/pve_load.h"
#include "engine/converged.h"
#include "engine/ifupdown.h"
#include "engine/reconcile.h"
#include "engine/resolve.h"
#include "engine/session.h"
#include "engine/switch.h"
#include "engine/underlay.h"
#include "engine/route_cache.h"
#include "engine/view.h"
#include "kinds/kind.h"
#include "kmod/probe.h"

/* --sdn-dir DIR: the definition Proxmox's deployed SDN configuration maps to. */
static int load_pve(const struct options *o, struct cluster **out, struct diag *diag)
{
	static const struct pve_import_opts opts = {.measured = true}; /* the node measures */
	char corosync[PATH_MAX];
	struct pve_paths p;

	pve_paths_init(&p, o->sdn_dir, o->corosync, corosync, sizeof(corosync));
	return pve_load_cluster(&p, &opts, out, diag);
}

/* What the definition comes from, for messages. */
static const char *definition_name(const struct options *o)
{
	return o->sdn_dir ? o->sdn_dir : o->config;
}

/* The definition; for_change: the command would change the node (its error says it did not). */
static int load_cluster(const struct options *o, struct cluster **out, bool for_change)
{
	struct diag diag;
	int ret;

	diag_init(&diag);
	ret = o->sdn_dir ? load_pve(o, out, &diag) : definition_load_file(o->config, out, &diag);
	diag_print(&diag, stderr);
	diag_free(&diag);
	if (ret < 0) {
		log_error("%s: definition not valid%s; fix the errors above", definition_name(o),
			  for_change ? ", nothing was changed" : "");
		return -1;
	}
	return 0;
}

int session_load_cluster(const struct options *o, struct cluster **out)
{
	return load_cluster(o, out, false);
}

const char *session_node_name(const struct options *o, char *host, size_t len)
{
	const char *name = o->node ? o->node : host_node_name(host, len);

	if (!name) {
		log_error("cannot read this host's name: give the node with -n NODE");
	} else if (!name_valid(name)) {
		/* it names the node's lock file too: never a path */
		log_error("%s \"%.80s\" is not a node name (lower-case letters, digits and '-', at "
			  "most %d): give the node's name in the definition with -n NODE",
			  o->node ? "-n" : "this host's name", name, FABRICD_NAME_MAX);
		name = NULL;
	}
	return name;
}

/* name's index in c, or -1 (logged: the node is not in the definition). */
static int node_index(const struct options *o, const struct cluster *c, const char *name)
{
	int idx = cluster_find_node(c, name);

	if (idx < 0)
		log_error("node \"%s\" is not in %s: give one of its nodes with -n NODE, or add "
			  "this node to %s (one that left: `fabricd down` removes its fabric)",
			  name, definition_name(o),
			  o->sdn_dir ? "Proxmox's WireGuard fabric (Datacenter > SDN > Fabrics)"
				     : "it with `fabricd join -c FILE`");
	return idx;
}

int session_find_self(const struct options *o, const struct cluster *c, size_t *self)
{
	char host[256] = "";
	const char *name = session_node_name(o, host, sizeof(host));
	int idx = name ? node_index(o, c, name) : -1;

	if (idx < 0)
		return -1;
	*self = (size_t)idx;
	return 0;
}

void session_free(struct session *s)
{
	if (s->view) {
		view_reclaim(s->view, &s->have); /* kept for the next pass */
		view_note_made(s->view, &s->plan);
	}
	plan_free(&s->plan);
	diag_free(&s->conflicts);
	observed_free(&s->have);
	desired_free(&s->want);
	reconcile_close(&s->r);
	if (!s->borrowed)
		cluster_free(s->cluster);
	memset(s, 0, sizeof(*s));
}

/*
 * down --cluster NAME: no definition at all (lost, or unreadable): what
 * fabricd owns is marked with the cluster's name, and that is all down needs.
 */
static int cluster_by_name(const char *name, struct cluster **out)
{
	if (!name_valid(name)) {
		log_error("--cluster \"%.80s\" is not a cluster name (lower-case letters, digits "
			  "and '-'): give the name the definition's \"cluster\" had",
			  name);
		return -1;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out) {
		log_error("out of memory");
		return -1;
	}
	(*out)->version = 1;
	snprintf((*out)->name, sizeof((*out)->name), "%s", name);
	return 0;
}

/*
 * down --sdn-dir with Proxmox's files unusable (pmxcfs without quorum or not
 * mounted, a file half written): down needs no vnet, only the cluster's name,
 * which corosync.conf gives as import-pve maps it. Without that, --cluster.
 */
static int load_pve_for_down(const struct options *o, struct cluster **out)
{
	static const struct pve_import_opts opts = {.measured = true};
	char path[PATH_MAX], name[FABRICD_NAME_MAX + 1] = "";
	struct corosync_conf cc = {0};
	struct pve_paths p;
	struct diag diag;
	size_t len;
	char *text;
	int ret;

	diag_init(&diag);
	pve_paths_init(&p, o->sdn_dir, o->corosync, path, sizeof(path));
	ret = pve_load_cluster(&p, &opts, out, &diag);
	for (size_t i = 0; ret < 0 && i < diag.n; i++)
		log_warn("%s", diag.msgs[i]); /* down goes on without them */
	if (ret == 0)
		diag_print(&diag, stderr);
	diag_free(&diag);
	if (ret == 0)
		return 0;
	diag_init(&diag);
	if (pve_read_file(path, &text, &len) == 0) {
		if (corosync_parse(text, len, path, &cc, &diag) == 0 && cc.cluster_name)
			pve_cluster_name(cc.cluster_name, name, sizeof(name));
		corosync_free(&cc);
		free(text);
	}
	diag_free(&diag);
	if (!name[0]) {
		log_error("%s: Proxmox's configuration could not be read (above) and %s names no "
			  "cluster; nothing was changed: take the node down without it: fabricd "
			  "down --cluster NAME (corosync.conf's cluster_name, in lower case)",
			  o->sdn_dir, path);
		return -1;
	}
	log_warn("%s: Proxmox's configuration could not be read (above); down needs no vnet: "
		 "removing everything fabricd owns for cluster %s (corosync.conf) on this node",
		 o->sdn_dir, name);
	return cluster_by_name(name, out);
}

/* For down (it needs no vnet): followed vnets left out when .running-config is unusable. */
static int load_for_down(const struct options *o, struct cluster **out)
{
	struct diag diag;
	int ret;

	if (o->cluster_name)
		return cluster_by_name(o->cluster_name, out);
	if (o->sdn_dir)
		return load_pve_for_down(o, out);
	diag_init(&diag);
	ret = config_load_file(o->config, out, &diag);
	if (ret == 0 && pve_follow_load(*out, &diag) < 0) {
		for (size_t i = 0; i < diag.n; i++)
			log_warn("%s", diag.msgs[i]);
		for (size_t i = 0; i < diag.n_warnings; i++)
			log_warn("%s", diag.warnings[i]);
		log_warn("%s: the Proxmox configuration could not be read (above); down needs no "
			 "vnet: removing everything fabricd owns on this node",
			 o->config);
		diag_free(&diag); /* the cluster stays as the definition file has it */
		return 0;
	}
	diag_print(&diag, stderr);
	diag_free(&diag);
	if (ret < 0) {
		log_error("%s: definition not valid, nothing was changed; fix the errors above, or "
			  "take the node down without it: fabricd down --cluster NAME (the "
			  "cluster's name)",
			  o->config);
		return -1;
	}
	return 0;
}

/* What a session is opened for: a change, down, or a report (status). */
enum open_mode { OPEN_CHANGE, OPEN_DOWN, OPEN_REPORT };

static int open_cluster(struct session *s, const struct options *o, struct cluster *c,
			enum open_mode mode);

static int open_with(struct session *s, const struct options *o, enum open_mode mode)
{
	bool for_change = mode == OPEN_CHANGE;
	struct cluster *c = NULL;

	memset(s, 0, sizeof(*s));
	if ((mode == OPEN_DOWN ? load_for_down(o, &c) : load_cluster(o, &c, for_change)) < 0)
		return -1;
	if (open_cluster(s, o, c, mode) < 0) {
		s->cluster = c;
		s->borrowed = false;
		return -1;
	}
	s->borrowed = false;
	return 0;
}

int session_open(struct session *s, const struct options *o)
{
	return open_with(s, o, OPEN_CHANGE);
}

int session_open_report(struct session *s, const struct options *o)
{
	return open_with(s, o, OPEN_REPORT);
}

int session_open_down(struct session *s, const struct options *o)
{
	return open_with(s, o, OPEN_DOWN);
}

/*
 * The node of the session: s->self and s->node. For down (departed_ok), a
 * node the definition no longer has (`fabricd leave` took it out) is a
 * node that left: down still removes what fabricd owns for the cluster.
 */
static int find_node(struct session *s, const struct options *o, bool departed_ok)
{
	char host[256] = "";
	const char *name = session_node_name(o, host, sizeof(host));
	int idx;

	if (!name)
		return -1;
	if (departed_ok && o->cluster_name) {
		s->departed = true; /* down --cluster: no definition, no nodes */
	} else if (departed_ok && cluster_find_node(s->cluster, name) < 0) {
		log_warn("node \"%s\" is not in %s (it left the cluster?): down removes what "
			 "fabricd owns for cluster %s on this node",
			 name, definition_name(o), s->cluster->name);
		s->departed = true;
	} else if ((idx = node_index(o, s->cluster, name)) < 0) {
		return -1;
	} else {
		s->self = (size_t)idx;
	}
	snprintf(s->node, sizeof(s->node), "%s", name);
	return 0;
}

/*
 * The WireGuard backend. A daemon's later passes keep what auto chose first:
 * with the module unloaded for a moment (modprobe -r takes every kernel
 * device), a pass would otherwise build the fabric on wireguard-go, where the
 * existing device then keeps it for good. down and status need no WireGuard
 * to work with what exists (observe takes an existing device's backend from
 * its kind), so for them none available is only said.
 */
static int choose_backend(const struct options *o, const struct kmod_caps *caps,
			  enum open_mode mode, enum wg_backend *backend)
{
	static bool auto_chose;
	static enum wg_backend auto_choice;
	char err[256];

	if (o->wg_backend == WG_CHOICE_AUTO && auto_chose) {
		*backend = auto_choice;
		return 0;
	}
	if (kmod_choose_backend(o->wg_backend, caps, backend, err, sizeof(err)) < 0) {
		if (mode == OPEN_CHANGE) {
			log_error("fabric %s: %s", FABRIC_IFNAME, err);
			return -1;
		}
		log_warn("fabric %s: %s", FABRIC_IFNAME, err);
		*backend =
		    o->wg_backend == WG_CHOICE_USERSPACE ? WG_BACKEND_USERSPACE : WG_BACKEND_KERNEL;
		return 0;
	}
	if (o->wg_backend == WG_CHOICE_AUTO) {
		auto_chose = true;
		auto_choice = *backend;
	}
	return 0;
}

/* --end-grace names zones of the definition: one that is not is a typo, said (ZONE[,ZONE...]) */
static int check_end_grace(const char *list, const struct cluster *c)
{
	for (const char *p = list; p;) {
		size_t len = strcspn(p, ",");
		bool known = false;

		for (size_t i = 0; i < c->n_zones && !known; i++)
			known =
			    strlen(c->zones[i].name) == len && !strncmp(c->zones[i].name, p, len);
		if (!known) {
			log_error(
			    "--end-grace: the definition has no zone \"%.*s\": give the zones "
			    "whose switches are to end now, comma-separated "
			    "(--end-grace red,blue)",
			    (int)len, p);
			return -1;
		}
		p = p[len] == ',' ? p + len + 1 : NULL; /* "red," names a zone "" too */
	}
	return 0;
}

static int open_cluster(struct session *s, const struct options *o, struct cluster *c,
			enum open_mode mode)
{
	char owner[80];
	struct kmod_caps caps;
	enum wg_backend backend;
	const char *missing;
	int ret;

	memset(s, 0, sizeof(*s));
	s->ifupdown_file = o->ifupdown_file;
	s->cluster = c;
	s->borrowed = true;
	s->report_only = mode == OPEN_REPORT;
	if (find_node(s, o, mode == OPEN_DOWN) < 0 || check_end_grace(o->end_grace, c) < 0)
		return -1;
	kmod_probe(&caps);
	missing = kmod_missing_reason(&caps);
	if (missing) {
		log_error("%s", missing);
		return -1;
	}
	if (choose_backend(o, &caps, mode, &backend) < 0)
		return -1;
	s->backend_explicit = o->wg_backend != WG_CHOICE_AUTO;
	s->chosen_backend = backend;
	snprintf(owner, sizeof(owner), "%s%s", OWNER_PREFIX, s->cluster->name);
	ret = reconcile_open(&s->r, owner, backend);
	if (ret < 0) {
		log_error("cannot open a netlink socket: %s (fabricd needs root or CAP_NET_ADMIN)",
			  strerror(-ret));
		return -1;
	}
	s->r.grace = o->grace;
	s->r.end_grace = o->end_grace;
	s->r.frr_pathspace = o->frr_pathspace;
	if (!s->departed)
		memcpy(s->r.public_key, s->cluster->nodes[s->self].public_key, WG_KEY_LEN);
	plan_init(&s->plan, owner);
	return 0;
}

int session_open_cluster(struct session *s, const struct options *o, struct cluster *c)
{
	return open_cluster(s, o, c, OPEN_CHANGE);
}

int session_replan(struct session *s)
{
	plan_free(&s->plan);
	if (s->view)
		view_reclaim(s->view, &s->have);
	observed_free(&s->have);
	desired_free(&s->want);
	plan_init(&s->plan, s->r.owner);
	/* the view's changes were taken by the first observe: every vnet is planned */
	s->converged = NULL;
	s->r.converged = NULL;
	return session_plan(s);
}

/*
 * No plan without the underlay's MTU (no route to a node): status still
 * shows the node, its wanted objects without MTUs, and why in conflicts.
 */
/*
 * d, unless its errors are kept as conflicts for status, which shows them
 * in its output: then only the warnings, so no conflict is said twice.
 */
static void print_diag(const struct session *s, const struct diag *d, bool kept)
{
	/* the daemon's warnings: those it said at the last pass are not said again */
	diag_print_new(d, !(s->report_only && kept), s->view ? &s->view->said : NULL, log_stream());
}

static int unmeasured(struct session *s, struct diag *why)
{
	struct diag quiet;

	diag_init(&quiet);
	desired_build(s->cluster, s->self, 0, &s->want, &quiet);
	diag_free(&quiet);
	print_diag(s, why, true);
	diag_free(&s->conflicts);
	s->conflicts = *why;
	return -1;
}

/* "kernel WireGuard" or "wireguard-go", for people. */
static const char *backend_words(enum wg_backend b)
{
	return b == WG_BACKEND_USERSPACE ? "wireguard-go" : "kernel WireGuard";
}

/*
 * An existing device decides the backend (observe); one of the other kind
 * than --wg-backend kernel|userspace asked for is not replaced silently, nor
 * ignored: replacing it drops every session, so it is the operator's step.
 */
static bool backend_mismatch(const struct session *s, char *why, size_t len)
{
	const struct link_obs *wg = link_find(&s->have.links, FABRIC_IFNAME);

	if (!s->backend_explicit || s->r.backend == s->chosen_backend || !wg ||
	    !link_is_owned(wg, s->r.owner))
		return false;
	/* not down: it would take the vnets' bridges, and the guests' ports off them */
	snprintf(why, len,
		 "runs on %s, not on the %s that --wg-backend asks for: fabricd does not replace "
		 "a running fabric device (every WireGuard session would drop); to move it, %s "
		 "and apply again with --wg-backend %s (the vnets and their guests stay), or keep "
		 "it with --wg-backend auto",
		 backend_words(s->r.backend), backend_words(s->chosen_backend),
		 s->r.backend == WG_BACKEND_USERSPACE
		     ? "end its wireguard-go (the device goes with it)"
		     : "delete the device (ip link delete " FABRIC_IFNAME ")",
		 wg_backend_name(s->chosen_backend));
	return true;
}

/* Whether the definition in force has vnet v as it is: its name, VNI and zone's kind. */
static bool in_force_as_is(const struct cluster_vnet_index *in_force, const struct desired_vnet *v)
{
	const struct zone *zone;
	const struct vnet *had = cluster_vnet_index_find(in_force, v->name, &zone);

	return had && had->vni == v->vni && zone->transport == v->transport &&
	       (zone->control_plane == CONTROL_PLANE_EVPN) == v->evpn &&
	       !(zone->flags & ZONE_EXISTING_BRIDGES) == !v->existing_bridge;
}

/*
 * The vnets a conflict may hold alone (reconcile.h): with a new definition,
 * those the one in force has as they are. One new or changed there waits
 * with the whole definition: held, a renamed vnet's old bridge would go
 * before the new one can be made. 0 or -ENOMEM.
 */
static int holdable(struct session *s)
{
	struct cluster_vnet_index in_force;

	free(s->r.holdable);
	s->r.holdable = NULL;
	if (!s->r.hold_conflicting_vnets || s->in_force == s->cluster || !s->want.n_vnets)
		return 0;
	s->r.holdable = calloc(s->want.n_vnets, sizeof(*s->r.holdable));
	if (!s->r.holdable)
		return -ENOMEM;
	cluster_vnet_index_make(s->in_force, &in_force);
	for (size_t i = 0; i < s->want.n_vnets; i++)
		s->r.holdable[i] = in_force_as_is(&in_force, &s->want.vnets[i]);
	cluster_vnet_index_free(&in_force);
	return 0;
}

int session_plan(struct session *s)
{
	char mismatch[512] = "";
	double started = clock_mono_ms(), observed;
	struct timespec boot;
	struct diag diag;
	unsigned int mtu;
	int ret;

	/* deadlines are compared on CLOCK_BOOTTIME (kinds/link.h says why it is enough) */
	clock_gettime(CLOCK_BOOTTIME, &boot);
	s->r.boot_now = (long long)boot.tv_sec;
	s->r.now = (long long)time(NULL);
	ret = s->view ? view_observe(s->view, &s->r, &s->have) : observe(&s->r, &s->have);
	s->r.observed_ms = clock_mono_ms();
	if (ret == -EAGAIN) {
		/* each try of a dump was cut short by changes: busy, nothing wrong */
		log_error("cannot read the kernel's state: it kept changing while it was read; %s",
			  s->view ? "read again shortly" : "run the command again");
		return -1;
	}
	if (ret < 0) {
		log_error("cannot read the kernel's state: %s", strerror(-ret));
		return -1;
	}
	observed = clock_mono_ms();
	s->observe_ms = observed - started;
	/* status changes nothing: it shows the device as it runs, the mismatch a conflict */
	if (backend_mismatch(s, mismatch, sizeof(mismatch)) && !s->report_only) {
		log_error("fabric %s %s", FABRIC_IFNAME, mismatch);
		return -1;
	}
	if (s->converged && s->view) {
		converged_note_changes(s->converged, s->view);
		s->r.converged = s->converged;
	}
	diag_init(&diag);
	/* names first, with a bounded wait: the survey measures the route to each endpoint */
	resolve_cluster_names(s->cluster, s->self, RESOLVE_WAIT_MS);
	if (underlay_survey(s->r.rtnl, s->cluster, s->self, &s->have.links, &mtu, &diag) < 0) {
		if (mismatch[0])
			diag_add(&diag, "fabric " FABRIC_IFNAME, "%s", mismatch);
		return unmeasured(s, &diag);
	}
	ret = desired_build(s->cluster, s->self, mtu, &s->want, &diag);
	if (ret == 0) {
		if (s->r.converged)
			converged_note_want(s->converged, &s->want);
		/* the names were asked before the survey: never inside planning */
		resolve_endpoints(&s->want);
		switch_mark_stages(&s->r, &s->want, &s->have);
		ret = holdable(s);
		if (ret == 0)
			ret = plan_build(&s->r, &s->want, &s->have, &s->plan, &diag);
	}
	s->plan_ms = clock_mono_ms() - observed;
	print_diag(s, &diag, ret == -EEXIST);
	diag_free(&s->conflicts);
	if (ret == -EEXIST)
		s->conflicts = diag; /* kept: status shows them */
	else
		diag_free(&diag);
	if (mismatch[0])
		diag_add(&s->conflicts, "fabric " FABRIC_IFNAME, "%s", mismatch);
	if (ret < 0) {
		if (ret == -EEXIST) {
			if (!s->report_only) /* status changes nothing anyway */
				log_error("nothing was changed: resolve the conflicts above first");
		} else if (ret != -EINVAL) {
			log_error("planning failed: %s", strerror(-ret));
		}
		return -1;
	}
	if (s->view && view_guard_stale(s->view, &s->plan))
		return session_replan(s); /* once: the guard is read this time */
	return 0;
}

int session_use_view(struct session *s, struct obs_view *v, struct converged *c,
		     const struct cluster *in_force)
{
	s->view = v;
	s->converged = c;
	s->r.wg_unread_ok = true; /* a hung wireguard-go holds back no other repair */
	/* nor does one vnet's conflict (holdable() says which) */
	s->r.hold_conflicting_vnets = in_force != NULL;
	s->in_force = in_force;
	return 0;
}

void session_tune_fabric(const struct session *s, unsigned int wait_ms)
{
	bool made = false;

	if (s->plan.down)
		return;
	for (size_t i = 0; i < s->plan.n && !made; i++)
		made = s->plan.ops[i].type == OP_WG_CREATE;
	if (s->have.wg || made)
		wg_tune(s->r.backend, FABRIC_IFNAME, wait_ms);
}

int session_repair_guard(struct session *s)
{
	struct plan guard;
	int ret = 0;

	if (!s->conflicts.n)
		return 0;
	plan_init(&guard, s->r.owner);
	for (size_t i = 0; i < s->plan.n && ret == 0; i++) {
		struct op *from = &s->plan.ops[i], *op;

		if (!from->guard_repair)
			continue;
		op = plan_add(&guard, from->kind, (enum op_type)from->type,
			      (enum op_phase)from->phase, (enum op_verb)from->verb, NULL);
		if (!op) {
			ret = -ENOMEM;
			break;
		}
		*op = *from; /* the text and the note move along */
		from->text = NULL;
		from->note = NULL;
	}
	if (ret == 0 && guard.n) {
		log_warn("%s: the guard inet fabricd restored while the rest waits for the "
			 "conflicts above",
			 s->node);
		ret = plan_apply(&s->r, &guard) < 0 ? -1 : 1;
	}
	plan_free(&guard);
	return ret < 0 ? -1 : ret;
}

/* How long a one-shot apply waits for a wireguard-go it brought up to bind its sockets. */
#define WG_TUNE_WAIT_MS 500

/* Passes apply makes when wireguard-go dies under a burst of link events. */
#define APPLY_RETRIES 2

int session_apply(struct session *s, const char *verb)
{
	const char *node = s->node;
	size_t created, changed, deleted;
	int ret;

	route_cache_refresh(&s->want); /* as the last pass may have left it, and below */
	/*
	 * Before a port joins a bridge it keeps (ifreload would take one it does
	 * not keep), and with nothing else to change too (the file may be gone);
	 * down removes it once the ports are gone.
	 */
	if (!s->plan.down && ifupdown_sync(&s->want, s->ifupdown_file) < 0) {
		log_error(
		    "%s %s: nothing was changed (the file ifupdown2 reads could not say which "
		    "ports fabricd keeps in existing bridges, above)",
		    verb, node);
		return -1;
	}
	if (!s->plan.n) {
		printf("%s %s: nothing to change\n", verb, node);
		session_tune_fabric(s, 0);
		return 0;
	}
	plan_warn_lowered_mtus(&s->plan, node);
	ret = plan_apply(&s->r, &s->plan);
	plan_count(&s->plan, &created, &changed, &deleted);
	/* (down stops wireguard-go first; planned again it would build, not remove) */
	for (int retry = 0; ret == -ECHILD && !s->plan.down && retry < APPLY_RETRIES; retry++) {
		/* wireguard-go closed its device under the burst: build it again */
		log_warn("fabric %s: wireguard-go exited while links changed (its netlink socket "
			 "overflowed); starting it again",
			 FABRIC_IFNAME);
		plan_free(&s->plan);
		observed_free(&s->have);
		desired_free(&s->want);
		plan_init(&s->plan, s->r.owner);
		if (session_plan(s) < 0)
			return -1;
		ret = plan_apply(&s->r, &s->plan);
	}
	if (ret == -ENOTCONN)
		return -1; /* refused before any change: frr_check_plan said so */
	if (ret < 0) {
		log_error("%s %s: stopped after a failure; what succeeded stays, the next run "
			  "continues from there",
			  verb, node);
		return -1;
	}
	route_cache_refresh(&s->want);
	printf("%s %s: %zu created, %zu changed, %zu removed\n", verb, node, created, changed,
	       deleted);
	session_tune_fabric(s, WG_TUNE_WAIT_MS);
	return 0;
}

int session_apply_once(const struct options *o)
{
	struct session s;
	int ret = -1;

	if (session_open(&s, o) < 0 || session_load_keys(&s, o, true) < 0 || session_plan(&s) < 0)
		goto out;
	ret = session_apply(&s, "apply");
out:
	session_free(&s);
	return ret;
}
