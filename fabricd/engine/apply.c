// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/apply.c - runs a plan phase by phase: netlink ops in batches, the
 * WireGuard ops through the backend, the guard through libnftables; every
 * failure logged with its object, later phases skipped after one.
 */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "engine/fdb_learned.h"
#include "engine/linklocal.h"
#include "engine/guard_io.h"
#include "engine/link_group.h"
#include "engine/observe.h"
#include "netlink/ifindex.h"
#include "engine/reconcile.h"
#include "kinds/fabric.h"
#include "kinds/kind.h"

int fabric_apply(struct reconcile *r, struct op *op)
{
	int ret;

	switch (op->type) {
	case OP_WG_CREATE:
		return wg_create(r->backend, op->ifname, r->owner);
	case OP_WG_DESTROY:
		ret = wg_destroy(op->u.backend, op->ifname);
		/* wireguard-go exited on its own (a burst of link changes) and took the device */
		if (ret == -ENODEV && !if_nametoindex(op->ifname)) {
			log_warn("fabric %s: already gone (its wireguard-go had exited)",
				 op->ifname);
			return 0;
		}
		return ret;
	default:
		return -EINVAL;
	}
}

/* One op as it is sent, for --verbose. */
static void log_op(const struct op *op)
{
	struct op_text t;

	if (!log_is_verbose())
		return; /* the text is made only to be shown */
	op_describe(op, &t);
	log_debug("%c %s: %s%s%s%s", (char)op->verb, t.object, op_verb_word((enum op_verb)op->verb),
		  t.detail[0] ? " (" : "", t.detail, t.detail[0] ? ")" : "");
}

/*
 * why: the kernel's extack ("kernel: ..." by batch_error), or fabricd's own
 * words (an encoder's, the WireGuard backend's: a wireguard-go that cannot
 * write its PID file is no kernel's message).
 */
static void report_failure(struct op *op, int err, const char *why)
{
	const char *verb = op_verb_word((enum op_verb)op->verb);
	struct op_text t;
	char what[sizeof(t.detail) + 4] = "", more[NL_EXTACK_MAX + 16] = "";

	op->failed = true;
	op->no_device = err == -ENODEV;
	op_describe(op, &t);
	/* what it was to do, as plan said it: "change (mtu 1200 -> 1390) failed" */
	if (t.detail[0])
		snprintf(what, sizeof(what), " (%s)", t.detail);
	if (why && why[0])
		snprintf(more, sizeof(more), " (%s)", why);
	log_error("%s: %s%s failed: %s%s", t.object, verb, what, strerror(-err), more);
}

static void batch_error(void *cookie, int err, const char *extack, void *data)
{
	struct op *op = cookie;
	char kernel[NL_EXTACK_MAX + 16] = "";

	(void)data;
	if (extack && extack[0])
		snprintf(kernel, sizeof(kernel), "kernel: %s", extack);
	/* an op of several messages: the later ones fail because the first did (ENODEV) */
	if (op && !op->failed)
		report_failure(op, err, kernel);
}

/* Whether a link has this index (ifindex != 0) or, without one, this name. */
static bool link_still_there(int ifindex, const char *ifname)
{
	char name[IF_NAMESIZE];

	if (ifindex)
		return if_indextoname((unsigned int)ifindex, name) != NULL;
	return !ifname[0] || if_nametoindex(ifname) != 0; /* no name: cannot tell */
}

bool plan_failed_on_vanished_links(const struct plan *p)
{
	size_t failed = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (!op->failed)
			continue;
		if (!op->no_device || link_still_there(op->ifindex, op->ifname))
			return false;
		failed++;
	}
	return failed > 0;
}

/* A kernel booted with ipv6.disable=1 refuses AF_INET6 settings (a boot setting: asked once). */
static bool ipv6_enabled(void)
{
	static int enabled = -1;

	if (enabled < 0)
		enabled = access("/proc/sys/net/ipv6", F_OK) == 0;
	return enabled;
}

/*
 * The last name looked up: a vnet's flood entries come one after another and
 * name the same device (if_nametoindex opens a socket each time). Any link
 * message forgets it, since a link of that name may then go or come.
 */
struct name_cache {
	char name[IF_NAMESIZE];
	int ifindex;
};

/* The kinds' encoders write into the phase's batch through this. */
struct batch_encoder {
	struct kind_encoder e;
	struct nl_batch *b;
	struct op *op;
	struct name_cache *names;
};

static struct nlmsghdr *enc_msg(struct kind_encoder *e, uint16_t type, uint16_t flags)
{
	struct batch_encoder *be = (struct batch_encoder *)e;

	if (type != RTM_NEWNEIGH && type != RTM_DELNEIGH)
		be->names->ifindex = 0;
	return nl_batch_msg(be->b, type, flags);
}

static void enc_commit(struct kind_encoder *e, struct nlmsghdr *nlh)
{
	struct batch_encoder *be = (struct batch_encoder *)e;

	nl_batch_commit(be->b, nlh, be->op);
}

static void enc_reserve(struct kind_encoder *e, size_t n, size_t bytes)
{
	nl_batch_reserve(((struct batch_encoder *)e)->b, n, bytes);
}

/* names made in an earlier phase resolve: that batch has been sent */
static int enc_ifindex(struct kind_encoder *e, const char *name)
{
	struct name_cache *c = ((struct batch_encoder *)e)->names;

	if (c->ifindex && !strcmp(c->name, name))
		return c->ifindex;
	c->ifindex = (int)if_nametoindex(name);
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c->ifindex;
}

static int enc_fresh_ifindex(struct kind_encoder *e)
{
	(void)e;
	return ifindex_fresh();
}

static void encode_op(struct reconcile *r, struct nl_batch *b, struct name_cache *names,
		      struct op *op)
{
	const struct kind *k = kind_by_id(op->kind);
	struct batch_encoder be = {
	    .e = {.msg = enc_msg,
		  .commit = enc_commit,
		  .reserve = enc_reserve,
		  .ifindex = enc_ifindex,
		  .fresh_ifindex = enc_fresh_ifindex,
		  .owner = r->owner,
		  .ipv6 = ipv6_enabled()},
	    .b = b,
	    .op = op,
	    .names = names,
	};
	int ret;

	if (!k || !k->encode)
		return;
	log_op(op);
	linklocal_ipv6_on(op); /* an IPv6 address on a link with IPv6 turned off */
	ret = k->encode(&be.e, op);
	if (ret < 0)
		report_failure(op, ret, be.e.why);
}

static bool is_wg_op(const struct op *op)
{
	return op->type == OP_WG_CREATE || op->type == OP_WG_DESTROY || op->type == OP_WG_DEVICE ||
	       op->type == OP_WG_PEER;
}

static bool is_firewall_op(const struct op *op)
{
	return op->type == OP_FIREWALL_SET || op->type == OP_FIREWALL_DELETE;
}

/*
 * A batch for one phase's netlink ops, paced when the WireGuard backend needs
 * it: while wireguard-go runs, that is while the fabric device exists.
 */
static struct nl_batch *new_batch(struct reconcile *r, const struct plan *p, int phase, bool *paced)
{
	struct nl_batch *b = nl_batch_new(r->rtnl, batch_error, NULL);
	unsigned int pause_us;
	size_t max_msgs;

	/* FDB entries and addresses raise no link events */
	*paced = b && phase != PHASE_NEIGH && wg_link_pacing(r->backend, &max_msgs, &pause_us) &&
		 if_nametoindex(FABRIC_IFNAME);
	if (*paced) {
		nl_batch_set_pacing(b, max_msgs, pause_us);
		/* down removes the device anyway; waiting for it would only slow down */
		if (!p->down)
			nl_batch_set_throttle(b, wg_link_wait_drained, FABRIC_IFNAME);
	}
	return b;
}

static bool is_wg_config_op(const struct op *op, int phase)
{
	return (int)op->phase == phase && (op->type == OP_WG_PEER || op->type == OP_WG_DEVICE);
}

/*
 * A failed WireGuard change fails each of its ops. A listen port another
 * socket holds fails them all, the peers too, though nothing is wrong with
 * them: that is said once, with the port and what to do.
 */
static void report_wg_failure(struct plan *p, int phase, int err, uint16_t port)
{
	const char *why = wg_last_error();

	for (size_t i = 0; i < p->n; i++) {
		if (!is_wg_config_op(&p->ops[i], phase))
			continue;
		if (err != -EADDRINUSE || !port)
			report_failure(&p->ops[i], err, why);
		p->ops[i].failed = true;
	}
	if (err == -EADDRINUSE && port)
		log_error(
		    "fabric %s: listen port %u is taken: another socket on this node has it "
		    "(another WireGuard device? see ss -ulpn 'sport = :%u'); free it, or give "
		    "this node another port (nodes[i].listen_port in the definition)",
		    FABRIC_IFNAME, port, port);
}

/*
 * The device's settings and every peer op of a phase in one change: the
 * backend sends them in as few messages as fit (each peer by itself, never
 * by replacing the list, so live sessions survive). When the change fails,
 * each of its ops has failed.
 */
static void apply_wg_config(struct reconcile *r, struct plan *p, int phase)
{
	struct wg_device dev = {0};
	uint16_t port = 0;
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < p->n; i++)
		n += is_wg_config_op(&p->ops[i], phase);
	if (!n)
		return;
	dev.peers = calloc(n, sizeof(*dev.peers));
	if (!dev.peers) {
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < p->n; i++) {
		struct op *op = &p->ops[i];
		struct wg_peer *peers = dev.peers;
		size_t n_peers = dev.n_peers;

		if (!is_wg_config_op(op, phase))
			continue;
		log_op(op);
		if (op->type == OP_WG_DEVICE) {
			fabric_device_of(op, r->private_key, &dev);
			dev.peers = peers;
			dev.n_peers = n_peers;
			continue;
		}
		snprintf(dev.ifname, sizeof(dev.ifname), "%s", op->ifname);
		fabric_peer_of(op, &dev.peers[dev.n_peers++]);
	}
	ret = wg_set(r->backend, &dev);
	port = dev.listen_port;
	explicit_bzero(dev.peers, n * sizeof(*dev.peers)); /* preshared keys */
	free(dev.peers);
	explicit_bzero(&dev, sizeof(dev)); /* the private key */
	if (!ret)
		return;
fail:
	report_wg_failure(p, phase, ret, port);
}

/* The link delete of this phase for ifindex, or -1. */
static long delete_op_of(const struct plan *p, int ifindex)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (op->phase == PHASE_DELETE && op->type == OP_LINK_DELETE &&
		    op->ifindex == ifindex)
			return (long)i;
	}
	return -1;
}

/*
 * down: the links fabricd made carry its group (LINK_GROUP_OWNED); when the
 * group holds exactly links this plan deletes, one message deletes them all
 * and the kernel unregisters them together. Anything else in the group (a
 * link someone else put there, one to keep) and the links are deleted one by
 * one. Returns which ops that did (NULL: none), for the caller to free.
 */
static bool *delete_group(struct reconcile *r, const struct plan *p)
{
	struct link_table t = {0};
	char buf[NL_MSG_BUF] = {0};
	bool *done = NULL;
	size_t n = 0;

	if (!p->down || link_dump(r->rtnl, &t) < 0 || !(done = calloc(p->n, sizeof(*done))))
		goto fail;
	for (size_t i = 0; i < t.n; i++) {
		long k =
		    t.links[i].group == LINK_GROUP_OWNED ? delete_op_of(p, t.links[i].ifindex) : -2;

		if (k == -1)
			goto fail; /* in the group, not deleted by this plan: keep it */
		if (k >= 0) {
			done[k] = true;
			n++;
		}
	}
	if (n < 2)
		goto fail;
	link_put_group_delete(nl_msg_start(r->rtnl, buf, RTM_DELLINK, 0), LINK_GROUP_OWNED);
	if (nl_request(r->rtnl, (struct nlmsghdr *)buf, NULL, NULL) < 0)
		goto fail; /* nothing was deleted: the kernel checks the whole group first */
	log_debug("down: %zu links deleted as interface group %u", n, LINK_GROUP_OWNED);
	link_table_free(&t);
	return done;
fail:
	free(done);
	link_table_free(&t);
	return NULL;
}

/*
 * The links a phase deletes, in one message where they can be: down's by
 * fabricd's own group, a pass's (removals, retired devices) through a group
 * of their own, in groups no larger than wireguard-go's pacing while it runs.
 * A VXLAN takeover's delete stays in line with the create that follows it.
 */
static bool *delete_grouped(struct reconcile *r, const struct plan *p, int phase, size_t *seen)
{
	struct link_group_pacing pace = {0};
	size_t events = 0;
	bool *done;

	if (p->down)
		return phase == PHASE_DELETE ? delete_group(r, p) : NULL;
	if (phase != PHASE_DELETE && phase != PHASE_RETIRE)
		return NULL;
	if (wg_link_pacing(r->backend, &pace.max_links, &pace.pause_us) &&
	    if_nametoindex(FABRIC_IFNAME)) {
		pace.wait = wg_link_wait_drained;
		pace.wait_data = FABRIC_IFNAME;
	} else {
		pace.max_links = 0;
	}
	done = link_group_delete(r, p, phase, &pace, &events);
	if (pace.max_links)
		*seen += events; /* link events wireguard-go saw */
	return done;
}

/*
 * The phase run at step i: the plan's order, except on down. There fabricd's
 * part of FRR goes first, while the fabric still carries BGP: bgpd closes its
 * sessions with a notification and the peers withdraw the node's VTEPs and
 * MACs at once (removed after the fabric, they kept them until the hold time,
 * 9 s, and sent its guests' traffic into nothing). Then wireguard-go stops,
 * so that it does not see (or die of) the burst of link deletes, and those
 * need no pacing.
 */
static int phase_at(const struct plan *p, int i)
{
	static const int first[] = {PHASE_FRR, PHASE_WG_DESTROY};

	if (!p->down)
		return i;
	if (i < 2)
		return first[i];
	for (int phase = 0, k = 2; phase < PHASE_COUNT; phase++) {
		if (phase == PHASE_FRR || phase == PHASE_WG_DESTROY)
			continue;
		if (k++ == i)
			return phase;
	}
	return i;
}

/* The ops of the phases after step (where a failure stopped the run): never tried. */
static void mark_skipped(struct plan *p, int step)
{
	for (int later = step + 1; later < PHASE_COUNT; later++) {
		int phase = phase_at(p, later);

		for (size_t i = 0; i < p->n; i++)
			p->ops[i].skipped = p->ops[i].skipped || (int)p->ops[i].phase == phase;
	}
}

/*
 * An op that goes on its own (the guard, FRR, WireGuard's device) is applied
 * here: true. False: it goes into the phase's netlink batch.
 */
static bool apply_alone(struct reconcile *r, struct op *op)
{
	int ret = 0;

	if (op->type == OP_WG_PEER || op->type == OP_WG_DEVICE)
		return true; /* all together, after the phase's batch (apply_wg_config) */
	if (is_firewall_op(op)) {
		log_op(op);
		ret = firewall_apply(op);
		if (ret < 0)
			report_failure(op, ret, "");
		return true;
	}
	if (op->type == OP_FRR_CONFIG) {
		ret = frr_write_and_reload(r->frr_pathspace, r->owner, op->text);
		if (ret < 0)
			report_failure(op, ret, "");
		return true;
	}
	if (!is_wg_op(op))
		return false;
	log_op(op);
	ret = fabric_apply(r, op);
	if (ret < 0)
		report_failure(op, ret, wg_last_error());
	return true;
}

int plan_apply(struct reconcile *r, struct plan *p)
{
	int first_err = frr_check_plan(r->frr_pathspace, p);
	size_t seen_by_wg = 0; /* link changes sent while wireguard-go ran */

	if (first_err)
		return first_err;

	int step;

	for (step = 0; step < PHASE_COUNT; step++) {
		int phase = phase_at(p, step);
		struct name_cache names = {0}; /* per phase: names made in it resolve in the next */
		bool *done = delete_grouped(r, p, phase, &seen_by_wg);
		struct nl_batch *b = NULL;
		bool failed = false, paced = false;

		for (size_t i = 0; i < p->n; i++) {
			struct op *op = &p->ops[i];

			if ((int)op->phase != phase)
				continue;
			if (done && done[i]) {
				log_op(op); /* deleted with its group */
				continue;
			}
			if (apply_alone(r, op))
				continue;
			if (!b && !(b = new_batch(r, p, phase, &paced))) {
				free(done);
				return -ENOMEM;
			}
			encode_op(r, b, &names, op);
			seen_by_wg += paced;
		}
		free(done);
		if (b && nl_batch_finish(b) < 0)
			failed = true; /* each failed op was reported by batch_error */
		if (phase == PHASE_NEIGH)
			fdb_forget_learned(r->rtnl, p);
		linklocal_forget(r->rtnl, p, phase);
		apply_wg_config(r, p, phase);
		for (size_t i = 0; i < p->n; i++) {
			if ((int)p->ops[i].phase == phase && p->ops[i].failed)
				failed = true;
		}
		if (failed && p->down && phase == PHASE_FRR) {
			/*
			 * down goes on: nothing after FRR's part needs it, and the node
			 * leaves the fabric (its peers drop it at BGP's hold time); a
			 * down again takes the part out once frr-reload.py does
			 */
			first_err = -EIO;
			continue;
		}
		if (failed) {
			/* later phases build on this one: stop here, the next apply resumes */
			first_err = -EIO;
			break;
		}
	}
	mark_skipped(p, step);
	/* wireguard-go may have closed its device under a burst of link events */
	if (!first_err && p->n && !p->down &&
	    !wg_survived_link_burst(r->backend, FABRIC_IFNAME, seen_by_wg))
		first_err = -ECHILD;
	return first_err;
}
