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
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "engine/guard_io.h"
#include "engine/ifindex.h"
#include "engine/reconcile.h"
#include "kinds/bridge.h"
#include "kinds/vxlan.h"

int fabric_apply(struct reconcile *r, struct op *op)
{
	struct wg_device dev;
	int ret;

	switch (op->type) {
	case OP_WG_CREATE:
		return wg_create(r->backend, op->ifname, r->owner);
	case OP_WG_DESTROY:
		return wg_destroy(op->backend, op->ifname);
	case OP_WG_DEVICE:
		dev = op->wg;
		snprintf(dev.ifname, sizeof(dev.ifname), "%s", op->ifname);
		ret = wg_set(r->backend, &dev);
		explicit_bzero(&dev, sizeof(dev));
		return ret;
	case OP_WG_PEER:
		memset(&dev, 0, sizeof(dev));
		snprintf(dev.ifname, sizeof(dev.ifname), "%s", op->ifname);
		/* pointers are set here: the plan's array may have moved since it was built */
		op->peer.allowed_ips = op->peer.n_allowed_ips ? &op->allowed_ip : NULL;
		dev.peers = &op->peer;
		dev.n_peers = 1;
		return wg_set(r->backend, &dev);
	default:
		return -EINVAL;
	}
}

/* One op as it is sent, for --verbose. */
static void log_op(const struct op *op)
{
	log_debug("%c %s: %s%s%s%s", (char)op->verb, op->object, op_verb_word(op->verb),
		  op->detail[0] ? " (" : "", op->detail, op->detail[0] ? ")" : "");
}

static void report_failure(struct op *op, int err, const char *extack)
{
	op->failed = true;
	if (extack && extack[0])
		log_error("%s: %s failed: %s (kernel: %s)", op->object, op_verb_word(op->verb),
			  strerror(-err), extack);
	else
		log_error("%s: %s failed: %s", op->object, op_verb_word(op->verb), strerror(-err));
}

static void batch_error(void *cookie, int err, const char *extack, void *data)
{
	(void)data;
	if (cookie)
		report_failure(cookie, err, extack);
}

/* The ifindex of an op's link: known from the dump, or looked up now (made in this run). */
static int resolve(struct op *op, const char *name)
{
	unsigned int idx;

	if (op->ifindex)
		return op->ifindex;
	idx = if_nametoindex(name);
	if (!idx) {
		report_failure(op, -ENODEV, "");
		return 0;
	}
	return (int)idx;
}

/* A kernel booted with ipv6.disable=1 refuses AF_INET6 settings. */
static bool ipv6_enabled(void)
{
	return access("/proc/sys/net/ipv6", F_OK) == 0;
}

/* Messages per send and pause between sends with wireguard-go (see plan_apply). */
#define USERSPACE_PACE_MSGS 8
#define USERSPACE_PACE_US   2000
#define WG_SETTLE_US	    50000

/* The smallest MTU that carries IPv6 (RFC 8200): below it the kernel has no IPv6 state. */
#define IPV6_MIN_MTU 1280

/* Far above what one link message takes; keeps a create and its alias together. */
#define NL_LINK_MSG_MAX 1024

/*
 * A link change as the kernel needs it: do_setlink applies the up flag before
 * IFLA_AF_SPEC, so a link that should come up without an IPv6 link-local
 * address gets that setting in one message and goes up in the next. Returns
 * the last message (the caller commits it).
 */
static struct nlmsghdr *put_link_change(struct nl_batch *b, struct op *op, int ifindex,
					struct link_change *c)
{
	struct nlmsghdr *nlh;

	if (!ipv6_enabled())
		c->mask &= ~LINK_SET_NO_ADDRGEN;
	if ((c->mask & LINK_SET_NO_ADDRGEN) && (c->mask & LINK_SET_UP)) {
		struct link_change first = *c;

		first.mask &= ~LINK_SET_UP;
		nlh = nl_batch_msg(b, RTM_NEWLINK, 0);
		link_put_change(nlh, ifindex, op->ifname, &first);
		nl_batch_commit(b, nlh, op);
		c->mask = LINK_SET_UP;
	}
	nlh = nl_batch_msg(b, RTM_NEWLINK, 0);
	link_put_change(nlh, ifindex, op->ifname, c);
	return nlh;
}

static void encode_op(struct reconcile *r, struct nl_batch *b, struct op *op)
{
	struct nlmsghdr *nlh;
	struct link_change c;
	int idx, master;

	switch (op->type) {
	case OP_BRIDGE_CREATE:
	case OP_VXLAN_CREATE:
		/*
		 * The kernel ignores IFLA_IFALIAS when it creates a link, so the
		 * owner mark follows in the same sendmsg: a fabricd killed in
		 * between cannot leave an unmarked link.
		 */
		nl_batch_reserve(b, 3, 3 * NL_LINK_MSG_MAX);
		nlh = nl_batch_msg(b, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
		if (op->type == OP_BRIDGE_CREATE) {
			bridge_put_create(nlh, op->ifname, op->mtu);
		} else {
			master = (int)if_nametoindex(op->master);
			if (!master) {
				report_failure(op, -ENODEV, "bridge not found");
				return;
			}
			vxlan_put_create(nlh, op, master);
		}
		/* the mark goes by index: it can only reach the link this create makes */
		idx = ifindex_fresh();
		if (!idx) {
			report_failure(op, -EAGAIN, "no free interface index found");
			return;
		}
		((struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index = idx;
		nl_batch_commit(b, nlh, op);
		memset(&c, 0, sizeof(c));
		c.mask = LINK_SET_ALIAS | LINK_SET_NO_ADDRGEN | LINK_SET_UP;
		/* under 1280 bytes a link has no IPv6 state, and the kernel refuses the setting */
		if (op->mtu && op->mtu < IPV6_MIN_MTU)
			c.mask &= ~LINK_SET_NO_ADDRGEN;
		snprintf(c.alias, sizeof(c.alias), "%s", r->owner);
		nlh = put_link_change(b, op, idx, &c);
		break;
	case OP_LINK_CHANGE:
		c = op->change;
		if ((c.mask & LINK_SET_MASTER) && !c.master) {
			c.master = (int)if_nametoindex(op->master);
			if (!c.master) {
				report_failure(op, -ENODEV, "bridge not found");
				return;
			}
		}
		nl_batch_reserve(b, 2, 2 * NL_LINK_MSG_MAX);
		nlh = put_link_change(b, op, op->ifindex, &c);
		break;
	case OP_LINK_DELETE:
		nlh = nl_batch_msg(b, RTM_DELLINK, 0);
		link_put_delete(nlh, op->ifindex, op->ifname);
		break;
	case OP_FDB_ADD:
	case OP_FDB_DEL:
		idx = resolve(op, op->ifname);
		if (!idx)
			return;
		if (op->type == OP_FDB_ADD)
			nlh = nl_batch_msg(b, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND);
		else
			nlh = nl_batch_msg(b, RTM_DELNEIGH, 0);
		fdb_put(nlh, idx, &op->dst);
		break;
	case OP_ADDR_ADD:
	case OP_ADDR_DEL:
		idx = resolve(op, op->ifname);
		if (!idx)
			return;
		if (op->type == OP_ADDR_ADD)
			nlh = nl_batch_msg(b, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
		else
			nlh = nl_batch_msg(b, RTM_DELADDR, 0);
		ifaddr_put(nlh, idx, &op->prefix);
		break;
	default:
		return;
	}
	log_op(op);
	nl_batch_commit(b, nlh, op);
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
 * wireguard-go closes its device when its link-event socket overflows, and
 * does so a moment after the burst that caused it: look twice.
 */
static bool wireguard_go_survived(void)
{
	if (!wg_exists(WG_BACKEND_USERSPACE, FABRIC_IFNAME))
		return false;
	usleep(WG_SETTLE_US);
	return wg_exists(WG_BACKEND_USERSPACE, FABRIC_IFNAME);
}

int plan_apply(struct reconcile *r, struct plan *p)
{
	int first_err = frr_check_plan(r->frr_pathspace, p);

	if (first_err)
		return first_err;

	for (int phase = 0; phase < PHASE_COUNT; phase++) {
		struct nl_batch *b = NULL;
		bool failed = false;

		for (size_t i = 0; i < p->n; i++) {
			struct op *op = &p->ops[i];
			int ret;

			if ((int)op->phase != phase)
				continue;
			if (is_firewall_op(op)) {
				log_op(op);
				ret = firewall_apply(op);
				if (ret < 0)
					report_failure(op, ret, "");
				continue;
			}
			if (op->type == OP_FRR_CONFIG) {
				ret = frr_write_and_reload(r->frr_pathspace, r->owner, op->text);
				if (ret < 0)
					report_failure(op, ret, "");
				continue;
			}
			if (is_wg_op(op)) {
				log_op(op);
				ret = fabric_apply(r, op);
				if (ret < 0)
					report_failure(op, ret, wg_last_error());
				continue;
			}
			if (!b && !(b = nl_batch_new(&r->rtnl, batch_error, NULL)))
				return -ENOMEM;
			/*
			 * wireguard-go closes its device when its link-event socket
			 * overflows (ENOBUFS), which a burst of link changes can
			 * cause: give it time to read. Kernel WireGuard needs none.
			 */
			if (r->backend == WG_BACKEND_USERSPACE && phase != PHASE_NEIGH)
				nl_batch_set_pacing(b, USERSPACE_PACE_MSGS, USERSPACE_PACE_US);
			/* names made in an earlier phase resolve: that batch has been sent */
			encode_op(r, b, op);
		}
		if (b && nl_batch_finish(b) < 0)
			failed = true; /* each failed op was reported by batch_error */
		for (size_t i = 0; i < p->n; i++) {
			if ((int)p->ops[i].phase == phase && p->ops[i].failed)
				failed = true;
		}
		if (failed) {
			/* later phases build on this one: stop here, the next apply resumes */
			first_err = -EIO;
			break;
		}
	}
	/* wireguard-go may have closed its device under a burst of link events */
	if (!first_err && r->backend == WG_BACKEND_USERSPACE && p->n && !p->down &&
	    !wireguard_go_survived())
		first_err = -ECHILD;
	return first_err;
}
