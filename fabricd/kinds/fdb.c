// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/fdb.c - all-zeros VXLAN FDB entries (head-end replication remotes). */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/fdb.h"
#include "kinds/kind.h"
#include "engine/observe.h"
#include "kinds/vxlan.h"
#include "base/addr.h"

static const uint8_t zero_mac[6];

int fdb_parse(const struct nlmsghdr *nlh, struct fdb_entry *e)
{
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	bool zero = false;

	memset(e, 0, sizeof(*e));
	if (nlh->nlmsg_type != RTM_NEWNEIGH || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return 0;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE)
		return 0;
	e->ifindex = ndm->ndm_ifindex;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		uint16_t len = mnl_attr_get_payload_len(attr);

		switch (mnl_attr_get_type(attr)) {
		case NDA_LLADDR:
			zero = len == 6 && !memcmp(mnl_attr_get_payload(attr), zero_mac, 6);
			break;
		case NDA_DST:
			if (len == 4 || len == 16) {
				e->dst.family = len == 4 ? AF_INET : AF_INET6;
				memcpy(e->dst.bytes, mnl_attr_get_payload(attr), len);
			}
			break;
		}
	}
	return zero && e->dst.family ? 1 : 0;
}

/*
 * An all-zeros FDB entry with a remote, the only neighbour entries fabricd
 * makes (learned MAC addresses and ARP come and go with guest traffic); its
 * device in *ifindex. The daemon's watch wakes on these and its view marks
 * the device for reading again.
 */
bool fdb_msg_is_remote(const struct nlmsghdr *nlh, int *ifindex)
{
	static const uint8_t zero[6];
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	bool mac = false, dst = false;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return false;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE)
		return false;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		if (mnl_attr_get_type(attr) == NDA_LLADDR)
			mac = mnl_attr_get_payload_len(attr) == 6 &&
			      !memcmp(mnl_attr_get_payload(attr), zero, 6);
		else if (mnl_attr_get_type(attr) == NDA_DST)
			dst = true;
	}
	*ifindex = ndm->ndm_ifindex;
	return mac && dst;
}

void fdb_table_free(struct fdb_table *t)
{
	free(t->entries);
	t->entries = NULL;
	t->n = 0;
	t->sorted = false;
}

static int entry_cmp(const struct fdb_entry *a, int ifindex, const struct ip_addr *dst)
{
	if (a->ifindex != ifindex)
		return a->ifindex < ifindex ? -1 : 1;
	if (a->dst.family != dst->family)
		return a->dst.family < dst->family ? -1 : 1;
	return memcmp(a->dst.bytes, dst->bytes, ip_addr_len(dst));
}

static int sort_cmp(const void *a, const void *b)
{
	const struct fdb_entry *y = b;

	return entry_cmp(a, y->ifindex, &y->dst);
}

/*
 * The kernel dumps device by device, so the entries usually come grouped by
 * ifindex in ascending order: then only each device's entries are sorted
 * (63 at a time instead of 64,512 at once).
 */
void fdb_table_sort(struct fdb_table *t)
{
	size_t i = 1;

	while (i < t->n && t->entries[i - 1].ifindex <= t->entries[i].ifindex)
		i++;
	if (i < t->n) {
		qsort(t->entries, t->n, sizeof(*t->entries), sort_cmp);
		t->sorted = true;
		return;
	}
	for (size_t lo = 0; lo < t->n; lo = i) {
		for (i = lo + 1; i < t->n && t->entries[i].ifindex == t->entries[lo].ifindex; i++)
			;
		if (i - lo > 1)
			qsort(t->entries + lo, i - lo, sizeof(*t->entries), sort_cmp);
	}
	t->sorted = true;
}

/* The first entry of ifindex (sorted: by bisection), or t->n. */
static size_t first_of(const struct fdb_table *t, int ifindex)
{
	size_t lo = 0, hi = t->n;

	if (!t->sorted) {
		while (lo < t->n && t->entries[lo].ifindex != ifindex)
			lo++;
		return lo;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->entries[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->entries[lo].ifindex == ifindex ? lo : t->n;
}

/* Whether entry i is past ifindex's entries (sorted: they are contiguous). */
static bool past(const struct fdb_table *t, size_t i, int ifindex)
{
	return i >= t->n || (t->sorted && t->entries[i].ifindex != ifindex);
}

bool fdb_has(const struct fdb_table *t, int ifindex, const struct ip_addr *dst)
{
	for (size_t i = first_of(t, ifindex); !past(t, i, ifindex); i++) {
		if (t->entries[i].ifindex == ifindex && ip_addr_equal(&t->entries[i].dst, dst))
			return true;
	}
	return false;
}

void fdb_put(struct nlmsghdr *nlh, int ifindex, const struct ip_addr *dst)
{
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = NUD_NOARP | NUD_PERMANENT;
	/* NTF_SELF: the entry belongs to the VXLAN device's own table, not the bridge's */
	ndm->ndm_flags = NTF_SELF;
	mnl_attr_put(nlh, NDA_LLADDR, sizeof(zero_mac), zero_mac);
	mnl_attr_put(nlh, NDA_DST, ip_addr_len(dst), dst->bytes);
}

/* Entry lo..hi-1 (of one device, sorted) that is dst, or hi. */
static size_t find_in(const struct fdb_table *t, size_t lo, size_t hi, int ifindex,
		      const struct ip_addr *dst)
{
	size_t end = hi;

	if (!t->sorted) {
		for (; lo < hi; lo++) {
			if (t->entries[lo].ifindex == ifindex &&
			    ip_addr_equal(&t->entries[lo].dst, dst))
				return lo;
		}
		return end;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (entry_cmp(&t->entries[mid], ifindex, dst) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && !entry_cmp(&t->entries[lo], ifindex, dst) ? lo : end;
}

/* The end of the device's entries from lo: sorted, where they stop; else the table's end. */
static size_t end_of(const struct fdb_table *t, size_t lo, int ifindex)
{
	while (t->sorted && lo < t->n && t->entries[lo].ifindex == ifindex)
		lo++;
	return t->sorted ? lo : t->n;
}

static int plan_del(struct plan *p, const struct vxlan_port *want, int ifindex,
		    const struct ip_addr *dst)
{
	struct op *op = plan_add(p, KIND_FDB, OP_FDB_DEL, PHASE_NEIGH, VERB_DELETE, want->name);

	if (!op)
		return -ENOMEM;
	op->ifindex = ifindex;
	op->u.dst = *dst;
	return 0;
}

/*
 * The device's entries no remote wants, in the table's order. wanted[i - lo]
 * marks entry i as found by the adds' lookups (NULL: look each one up).
 */
static int plan_dels(const struct fdb_table *fdb, size_t lo, size_t hi, const bool *wanted,
		     const struct vxlan_port *want, int ifindex, struct plan *p)
{
	for (size_t i = lo; i < hi; i++) {
		const struct fdb_entry *e = &fdb->entries[i];
		bool keep = wanted && wanted[i - lo];

		if (e->ifindex != ifindex)
			continue;
		for (size_t r = 0; !wanted && r < want->n_remotes && !keep; r++)
			keep = ip_addr_equal(&want->remotes[r], &e->dst);
		if (!keep && plan_del(p, want, ifindex, &e->dst) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * in: port (the device wanted), link (its owned link; NULL only when
 * recreated), recreated, have->fdb. The device's entries are bisected once
 * per remote (the table is sorted by device and address), and the ones found
 * marked, so that what is left is what goes: O(R log R) a device, not R².
 */
static int fdb_plan(const struct kind_input *in, struct plan *p)
{
	const struct vxlan_port *want = in->port;
	const struct fdb_table *fdb = &in->have->fdb;
	int ifindex = in->recreated ? 0 : in->link->ifindex;
	size_t lo = 0, hi = 0;
	bool *wanted = NULL;
	int ret;

	if (want->evpn)
		return 0; /* FRR's zebra owns an EVPN vnet's flood list and MACs: leave them */
	if (!in->recreated) {
		lo = first_of(fdb, ifindex);
		hi = end_of(fdb, lo, ifindex);
		/* without the marks (no memory, or unsorted) the deletes look each entry up */
		wanted = fdb->sorted && hi > lo ? calloc(hi - lo, sizeof(*wanted)) : NULL;
	}
	for (size_t r = 0; r < want->n_remotes; r++) {
		size_t at = in->recreated ? hi : find_in(fdb, lo, hi, ifindex, &want->remotes[r]);
		struct op *op;

		if (at < hi) {
			if (wanted)
				wanted[at - lo] = true;
			continue;
		}
		op = plan_add(p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, want->name);
		if (!op) {
			free(wanted);
			return -ENOMEM;
		}
		op->ifindex = ifindex;
		op->u.dst = want->remotes[r];
	}
	ret = in->recreated ? 0 : plan_dels(fdb, lo, hi, wanted, want, ifindex, p);
	free(wanted);
	return ret;
}

static int fdb_encode(struct kind_encoder *e, struct op *op)
{
	/* known from the dump, or made earlier in this run */
	int idx = op->ifindex ? op->ifindex : e->ifindex(e, op->ifname);
	struct nlmsghdr *nlh;

	if (!idx)
		return -ENODEV;
	if (op->type == OP_FDB_ADD)
		nlh = e->msg(e, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND);
	else
		nlh = e->msg(e, RTM_DELNEIGH, 0);
	if (!nlh)
		return -ENOBUFS;
	fdb_put(nlh, idx, &op->u.dst);
	e->commit(e, nlh);
	return 0;
}

/* The FDB kind's table of the observed state: struct fdb_table (unsorted until fdb_table_sort). */
static int fdb_kind_parse(const struct nlmsghdr *nlh, void *table)
{
	struct fdb_table *t = table;
	struct fdb_entry e;

	if (fdb_parse(nlh, &e) <= 0)
		return 0;
	/* the capacity doubles whenever n reaches a power of two (0, 1, 2, 4, ...) */
	if (!(t->n & (t->n - 1))) {
		struct fdb_entry *grown =
		    realloc(t->entries, (t->n ? 2 * t->n : 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->entries = grown;
	}
	t->entries[t->n++] = e;
	t->sorted = false;
	return 1;
}

/* The object says it all: "fdb vx100 remote 192.0.2.2". */
static void fdb_describe(const struct op *op, char *buf, size_t len)
{
	(void)op;
	if (len)
		buf[0] = '\0';
}

const struct kind fdb_kind = {.name = "fdb",
			      .noun = "fdb",
			      .parse = fdb_kind_parse,
			      .plan = fdb_plan,
			      .encode = fdb_encode,
			      .describe = fdb_describe};
