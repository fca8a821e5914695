// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/fdb_learned.c - a remote that goes takes the MACs learned behind it.
 *
 * A VXLAN device learns where each guest MAC lives (MAC -> remote address, in
 * its own table, NTF_SELF). When a remote goes (a node left, or moved to
 * another underlay address), those entries keep sending unicast to the old
 * address until they age out (300 s) or the guest speaks first: a guest that
 * only answers never does, and the old address may now be a stranger's. So
 * after the all-zeros entries are deleted, each such device's table is read
 * and the learned entries to the removed remotes are deleted too. Entries
 * someone made (permanent, static, or FRR's extern_learn) are left alone.
 */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "engine/fdb_learned.h"
#include "kinds/vxlan.h"

struct learned {
	uint8_t mac[6];
	struct ip_addr dst;
};

/* A removed remote: the plan's OP_FDB_DEL that did not fail. */
struct removed {
	int ifindex;
	struct ip_addr dst;
};

struct forget {
	const struct removed *gone; /* of the device being read, sorted */
	size_t n_gone;
	int ifindex;
	size_t n, cap;
	struct learned *found;
};

static int removed_cmp(const void *a, const void *b)
{
	const struct removed *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->dst.family != y->dst.family)
		return x->dst.family < y->dst.family ? -1 : 1;
	return memcmp(x->dst.bytes, y->dst.bytes, ip_addr_len(&x->dst));
}

static bool remote_removed(const struct forget *f, const struct ip_addr *dst)
{
	struct removed key = {.ifindex = f->ifindex, .dst = *dst};

	return bsearch(&key, f->gone, f->n_gone, sizeof(key), removed_cmp) != NULL;
}

static int learned_cb(const struct nlmsghdr *nlh, void *data)
{
	static const uint8_t zero[6];
	struct forget *f = data;
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	struct learned e = {0};
	bool mac = false;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return MNL_CB_OK;
	ndm = mnl_nlmsg_get_payload(nlh);
	/* the device's own table, learned (not permanent, static or FRR's) */
	if (ndm->ndm_family != AF_BRIDGE || ndm->ndm_ifindex != f->ifindex ||
	    !(ndm->ndm_flags & NTF_SELF) || (ndm->ndm_flags & NTF_EXT_LEARNED) ||
	    (ndm->ndm_state & (NUD_PERMANENT | NUD_NOARP)))
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		uint16_t len = mnl_attr_get_payload_len(attr);

		if (mnl_attr_get_type(attr) == NDA_LLADDR && len == 6) {
			memcpy(e.mac, mnl_attr_get_payload(attr), 6);
			mac = memcmp(e.mac, zero, 6) != 0;
		} else if (mnl_attr_get_type(attr) == NDA_DST && (len == 4 || len == 16)) {
			e.dst.family = len == 4 ? AF_INET : AF_INET6;
			memcpy(e.dst.bytes, mnl_attr_get_payload(attr), len);
		}
	}
	if (!mac || !e.dst.family || !remote_removed(f, &e.dst))
		return MNL_CB_OK;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct learned *grown = realloc(f->found, cap * sizeof(*grown));

		if (!grown)
			return MNL_CB_ERROR;
		f->found = grown;
		f->cap = cap;
	}
	f->found[f->n++] = e;
	return MNL_CB_OK;
}

static void learned_reset(void *data)
{
	((struct forget *)data)->n = 0;
}

static void put_learned(struct nlmsghdr *nlh, int ifindex, const struct learned *e)
{
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_flags = NTF_SELF;
	mnl_attr_put(nlh, NDA_LLADDR, sizeof(e->mac), e->mac);
	/* with its destination: only that remote of the entry goes */
	mnl_attr_put(nlh, NDA_DST, ip_addr_len(&e->dst), e->dst.bytes);
}

static void ignore_error(void *cookie, int err, const char *extack, void *data)
{
	(void)cookie, (void)err, (void)extack, (void)data; /* aged out meanwhile */
}

/* The learned entries of one device to the remotes the plan removed from it. */
static void forget_on_device(struct nl_sock *s, struct forget *f)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETNEIGH, 0);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	struct nl_batch *b;

	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = f->ifindex; /* that port's entries only */
	f->n = 0;
	if (nl_dump(s, nlh, learned_cb, learned_reset, f) < 0 || !f->n)
		return; /* the device went meanwhile; nothing learned behind the remote */
	b = nl_batch_new(s, ignore_error, NULL);
	if (!b)
		return;
	for (size_t i = 0; i < f->n; i++) {
		nlh = nl_batch_msg(b, RTM_DELNEIGH, 0);
		put_learned(nlh, f->ifindex, &f->found[i]);
		nl_batch_commit(b, nlh, NULL);
	}
	nl_batch_finish(b);
	log_debug("fdb: %zu learned MAC address%s behind removed remotes forgotten (ifindex %d)",
		  f->n, f->n == 1 ? "" : "es", f->ifindex);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * Devices the plan mutes or deletes (a transport switch's old sender): the
 * frames go by the vnet's other device, and the old one must keep its
 * learned entries until it is muted (later in the plan), or the bridge's
 * unicast to it would be lost in between.
 */
static bool leaves(const struct op *op)
{
	return op->ifindex && (op->type == OP_LINK_DELETE ||
			       (op->type == OP_LINK_CHANGE && ((op->u.link.mask & LINK_SET_FLUSH) ||
							       op->u.link.role == VXLAN_MUTE)));
}

/* A remote the FDB phase just removed (a later phase's have not gone yet). */
static bool removed_now(const struct op *op)
{
	static const uint8_t flood[6];

	/* one with extras was set by hand beside the wanted remote, which stays; one with a MAC
	 * is zebra's stale MAC entry, no remote */
	return op->type == OP_FDB_DEL && op->phase == PHASE_NEIGH && !op->failed && op->ifindex &&
	       !op->u.fdb.x.has && !memcmp(op->u.fdb.mac, flood, 6);
}

void fdb_forget_learned(struct nl_sock *s, const struct plan *p)
{
	struct forget f = {0};
	struct removed *gone;
	int *leaving;
	size_t n = 0, n_leaving = 0;

	for (size_t i = 0; i < p->n && !n; i++)
		n = removed_now(&p->ops[i]);
	if (!n)
		return; /* most passes (a build from empty has 70,000 ops) */
	n = 0;
	gone = malloc(p->n * sizeof(*gone));
	leaving = malloc(p->n * sizeof(*leaving));
	if (!gone || !leaving) {
		free(gone);
		free(leaving);
		return; /* best effort: they age out */
	}
	for (size_t i = 0; i < p->n; i++) {
		if (leaves(&p->ops[i]))
			leaving[n_leaving++] = p->ops[i].ifindex;
	}
	qsort(leaving, n_leaving, sizeof(*leaving), int_cmp);
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (removed_now(op) &&
		    !bsearch(&op->ifindex, leaving, n_leaving, sizeof(*leaving), int_cmp))
			gone[n++] = (struct removed){.ifindex = op->ifindex, .dst = op->u.fdb.dst};
	}
	free(leaving);
	qsort(gone, n, sizeof(*gone), removed_cmp);
	for (size_t i = 0, end; i < n; i = end) { /* device by device */
		for (end = i; end < n && gone[end].ifindex == gone[i].ifindex; end++)
			;
		f.ifindex = gone[i].ifindex;
		f.gone = &gone[i];
		f.n_gone = end - i;
		forget_on_device(s, &f);
	}
	free(f.found);
	free(gone);
}
