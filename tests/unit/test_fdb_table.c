// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_fdb_table.c - the compact table of all-zeros FDB entries
 * (kinds/fdb_table.c): IPv4 and IPv6 remotes of several devices added in
 * dump order and out of it, found sorted (bisection) and unsorted (scans)
 * alike, a device's entries walked in order, a device's entries replaced
 * (more, fewer, none, a device the table did not have), and all of it
 * checked against a plain list of the same entries; remotes with extras
 * (another VNI, port or device) kept apart; zebra's MAC entries by device.
 */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kinds/fdb.h"
#include "unit.h"

#define N_MAX 512

/* The reference: the entries as a plain list. */
struct plain {
	size_t n;
	struct fdb_entry e[N_MAX];
};

static struct fdb_entry entry(int ifindex, const char *addr)
{
	struct fdb_entry e;

	memset(&e, 0, sizeof(e));
	e.ifindex = ifindex;
	CHECK_INT(ip_addr_parse(addr, &e.dst), 0, "test address %s", addr);
	return e;
}

static void add_both(struct fdb_table *t, struct plain *pl, struct fdb_entry e)
{
	CHECK_INT(fdb_table_add(t, &e), 0, "add");
	pl->e[pl->n++] = e;
}

static bool plain_has(const struct plain *pl, int ifindex, const struct ip_addr *a)
{
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->e[i].ifindex == ifindex && ip_addr_equal(&pl->e[i].dst, a))
			return true;
	}
	return false;
}

static size_t plain_count(const struct plain *pl, int ifindex)
{
	size_t n = 0;

	for (size_t i = 0; i < pl->n; i++)
		n += pl->e[i].ifindex == ifindex;
	return n;
}

/* The table agrees with the list on every device 0..9 and a spread of addresses. */
static void check_same(const struct fdb_table *t, const struct plain *pl, const char *what)
{
	static const char *probes[] = {"10.0.0.1",  "10.0.0.2",	   "10.0.0.9",	  "10.0.1.1",
				       "192.0.2.7", "2001:db8::1", "2001:db8::2", "0.0.0.0"};

	CHECK_INT(t->n, pl->n, "%s: count", what);
	for (int dev = 0; dev < 10; dev++) {
		struct fdb_cursor c;
		struct ip_addr a, prev = {0};
		size_t walked = 0;
		bool ordered = true;

		for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
			struct fdb_entry e = entry(dev, probes[k]);

			CHECK(fdb_has(t, dev, &e.dst) == plain_has(pl, dev, &e.dst),
			      "%s: device %d %s", what, dev, probes[k]);
		}
		fdb_cursor_start(t, dev, &c);
		while (fdb_next(t, &c, &a)) {
			CHECK(plain_has(pl, dev, &a), "%s: device %d walks to one of its own", what,
			      dev);
			if (walked && t->sorted && a.family == prev.family)
				ordered &= memcmp(prev.bytes, a.bytes, 16) < 0;
			if (walked && t->sorted && a.family != prev.family)
				ordered &= prev.family == AF_INET;
			prev = a;
			walked++;
		}
		CHECK_INT(walked, plain_count(pl, dev), "%s: device %d walked whole", what, dev);
		CHECK(ordered, "%s: device %d walked in order (IPv4 first)", what, dev);
		CHECK(fdb_has_device(t, dev) == (plain_count(pl, dev) > 0),
		      "%s: device %d has some", what, dev);
	}
}

static void fill(struct fdb_table *t, struct plain *pl, bool dump_order)
{
	static const int devs[] = {7, 3, 5, 9, 1};

	for (size_t d = 0; d < 5; d++) {
		int dev = dump_order ? (int)d * 2 + 1 : devs[d];
		char a[64];

		for (int k = 9; k >= 1; k -= 2) {
			snprintf(a, sizeof(a), "10.0.0.%d", k);
			add_both(t, pl, entry(dev, a));
		}
		if (dev == 5 || dev == 3)
			add_both(t, pl, entry(dev, dev == 5 ? "2001:db8::2" : "2001:db8::1"));
		if (dev == 3)
			add_both(t, pl, entry(dev, "192.0.2.7"));
	}
}

static void test_sorted_and_unsorted(void)
{
	for (int order = 0; order < 2; order++) {
		struct fdb_table t = {0};
		struct plain pl = {0};

		fill(&t, &pl, order);
		CHECK(!t.sorted, "added: unsorted");
		check_same(&t, &pl, order ? "unsorted, dump order" : "unsorted, mixed");
		fdb_table_sort(&t);
		check_same(&t, &pl, order ? "sorted, dump order" : "sorted, mixed");
		CHECK_INT(t.n_v4, pl.n - 2, "IPv4 entries 8 bytes each");
		CHECK_INT(t.n_v6, 2, "IPv6 entries apart");
		fdb_table_free(&t);
		CHECK(!t.v4 && !t.v6 && !t.n, "freed");
	}
}

/* Replaces device dev's entries in both the table and the list with fresh's. */
static void replace_both(struct fdb_table *t, struct plain *pl, int dev,
			 const struct fdb_entry *fresh, size_t n)
{
	struct fdb_table f = {0};
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct fdb_entry e = fresh[i];

		e.ifindex = dev;
		CHECK_INT(fdb_table_add(&f, &e), 0, "fresh");
	}
	fdb_table_sort(&f);
	CHECK_INT(fdb_table_replace_device(t, dev, &f), 0, "replace device %d", dev);
	fdb_table_free(&f);
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->e[i].ifindex != dev)
			pl->e[k++] = pl->e[i];
	}
	pl->n = k;
	for (size_t i = 0; i < n; i++) {
		pl->e[pl->n] = fresh[i];
		pl->e[pl->n++].ifindex = dev;
	}
}

static void test_replace_device(void)
{
	struct fdb_table t = {0};
	struct plain pl = {0};
	struct fdb_entry more[80], fewer[] = {entry(5, "10.0.1.1")};
	struct fdb_entry v6[] = {entry(9, "2001:db8::2"), entry(9, "10.0.0.2")};

	fill(&t, &pl, true);
	fdb_table_sort(&t);
	for (int k = 0; k < 80; k++) {
		char a[32];

		snprintf(a, sizeof(a), "10.1.%d.%d", k / 7, k % 7 + 1);
		more[k] = entry(3, a);
	}
	replace_both(&t, &pl, 3, more, 80); /* grows past the capacity */
	check_same(&t, &pl, "device 3 grew");
	replace_both(&t, &pl, 5, fewer, 1);
	check_same(&t, &pl, "device 5 shrank, its IPv6 entry gone");
	replace_both(&t, &pl, 1, NULL, 0);
	check_same(&t, &pl, "device 1 emptied");
	replace_both(&t, &pl, 4, fewer, 0);
	check_same(&t, &pl, "device 4 was not there and stays away");
	replace_both(&t, &pl, 2, v6, 2);
	check_same(&t, &pl, "device 2 new, IPv4 and IPv6");
	replace_both(&t, &pl, 9, v6, 0);
	replace_both(&t, &pl, 7, NULL, 0);
	replace_both(&t, &pl, 3, NULL, 0);
	replace_both(&t, &pl, 2, NULL, 0);
	replace_both(&t, &pl, 5, NULL, 0);
	check_same(&t, &pl, "every device emptied");
	CHECK_INT(t.n, 0, "nothing left");
	replace_both(&t, &pl, 6, fewer, 1);
	check_same(&t, &pl, "an emptied table takes entries again");
	fdb_table_free(&t);
}

/* A message as the kernel dumps a remote: its extras only where they differ from the device's. */
static size_t neigh_msg(char *buf, int ifindex, const uint8_t dst[4], const uint32_t *vni,
			const uint16_t *port, const uint32_t *via)
{
	static const uint8_t zero[6];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	nlh->nlmsg_type = RTM_NEWNEIGH;
	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	mnl_attr_put(nlh, NDA_LLADDR, 6, zero);
	mnl_attr_put(nlh, NDA_DST, 4, dst);
	if (vni)
		mnl_attr_put_u32(nlh, NDA_VNI, *vni);
	if (port)
		mnl_attr_put_u16(nlh, NDA_PORT, htons(*port));
	if (via)
		mnl_attr_put_u32(nlh, NDA_IFINDEX, *via);
	return nlh->nlmsg_len;
}

/*
 * A remote with another VNI, port or device (set by hand) is parsed with
 * them, kept apart from the others (never the wanted remote), counted as the
 * device's, and replaced with the device's entries.
 */
static void test_odd_entries(void)
{
	static const uint8_t dst[4] = {192, 0, 2, 12};
	const uint32_t vni = 101, via = 7;
	const uint16_t port = 9999;
	char buf[256];
	struct fdb_table t = {0}, fresh = {0};
	struct fdb_entry e, plain = entry(3, "192.0.2.12");

	neigh_msg(buf, 3, dst, NULL, NULL, NULL);
	CHECK_INT(fdb_parse((struct nlmsghdr *)buf, &e), 1, "a plain remote");
	CHECK_INT(e.x.has, 0, "with nothing else");
	neigh_msg(buf, 3, dst, &vni, &port, &via);
	CHECK_INT(fdb_parse((struct nlmsghdr *)buf, &e), 1, "a remote with extras");
	CHECK(e.x.has == (FDB_HAS_VNI | FDB_HAS_PORT | FDB_HAS_VIA) && e.x.vni == 101 &&
		  e.x.port == 9999 && e.x.via == 7,
	      "its VNI, port and device");
	CHECK_INT(fdb_table_add(&t, &e), 0, "added");
	fdb_table_sort(&t);
	CHECK_INT((int)t.n, 0, "not among the remotes");
	CHECK_INT((int)t.n_odd, 1, "kept apart");
	CHECK(!fdb_has(&t, 3, &plain.dst), "not the wanted remote");
	CHECK(fdb_has_device(&t, 3) && !fdb_has_device(&t, 4), "device 3's");
	CHECK_INT(fdb_table_add(&fresh, &plain), 0, "fresh: the plain remote only");
	fdb_table_sort(&fresh);
	CHECK_INT(fdb_table_replace_device(&t, 3, &fresh), 0, "device 3 read again");
	CHECK(t.n_odd == 0 && fdb_has(&t, 3, &plain.dst), "the odd one gone, the plain one there");
	CHECK_INT(fdb_table_add(&fresh, &e), 0, "fresh: an odd one as well");
	CHECK_INT(fdb_table_replace_device(&t, 3, &fresh), 0, "device 3 read again");
	CHECK(t.n_odd == 1 && t.odd[0].x.vni == 101, "it comes along");
	fdb_table_free(&fresh);
	CHECK_INT(fdb_table_replace_device(&t, 5, &fresh), 0, "another device emptied");
	CHECK_INT((int)t.n_odd, 1, "device 3's odd entry stays");
	fdb_table_free(&t);
}

/* zebra's MAC entry as the kernel dumps it: its own (self, a remote) or the bridge's (master). */
static void mac_msg(char *buf, int ifindex, uint8_t last, bool master, bool extern_learn)
{
	static const uint8_t dst[4] = {192, 0, 2, 13};
	const uint8_t mac[6] = {2, 0, 0, 0x30, 2, last};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	nlh->nlmsg_type = RTM_NEWNEIGH;
	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_flags = (master ? NTF_MASTER : NTF_SELF) | (extern_learn ? NTF_EXT_LEARNED : 0);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	if (!master)
		mnl_attr_put(nlh, NDA_DST, 4, dst);
}

/*
 * zebra's MAC entries (extern_learn) are kept, learned ones not; sorted, a
 * device's come together by MAC, its own before the bridge's; a device read
 * again replaces only its own.
 */
static void test_zebra_macs(void)
{
	char buf[256];
	struct fdb_table t = {0}, fresh = {0};
	const struct fdb_mac *m;
	struct fdb_mac one;

	mac_msg(buf, 4, 1, false, false);
	CHECK_INT(fdb_parse_mac((struct nlmsghdr *)buf, &one), 0, "a learned MAC: not zebra's");
	mac_msg(buf, 4, 1, false, true);
	CHECK_INT(fdb_parse_mac((struct nlmsghdr *)buf, &one), 1, "zebra's, with its remote");
	CHECK(!one.master && one.dst.family == AF_INET && one.mac[5] == 1, "its MAC and remote");
	/* in no order: device 4's MAC 2 (bridge's, own), device 3's MAC 1, device 4's MAC 1 */
	const int devs[] = {4, 4, 3, 4, 4};
	const uint8_t lasts[] = {2, 2, 1, 1, 1};
	const bool masters[] = {true, false, false, false, true};
	for (size_t i = 0; i < 5; i++) {
		mac_msg(buf, devs[i], lasts[i], masters[i], true);
		CHECK_INT(fdb_table_take(&t, (struct nlmsghdr *)buf, 0), 0, "taken");
	}
	CHECK_INT((int)t.n, 0, "no flood entry");
	fdb_table_sort(&t);
	CHECK_INT((int)fdb_macs_of(&t, 4, &m), 4, "device 4's four");
	CHECK(m[0].mac[5] == 1 && !m[0].master && m[1].mac[5] == 1 && m[1].master &&
		  m[2].mac[5] == 2 && !m[2].master && m[3].master,
	      "by MAC, each one's own before the bridge's");
	CHECK_INT((int)fdb_macs_of(&t, 5, &m), 0, "device 5 has none");
	mac_msg(buf, 4, 9, false, true);
	CHECK_INT(fdb_table_take(&fresh, (struct nlmsghdr *)buf, 4), 0, "fresh: device 4's");
	mac_msg(buf, 3, 9, false, true);
	CHECK_INT(fdb_table_take(&fresh, (struct nlmsghdr *)buf, 4), 0, "another's: not taken");
	fdb_table_sort(&fresh);
	CHECK_INT(fdb_table_replace_device(&t, 4, &fresh), 0, "device 4 read again");
	CHECK(fdb_macs_of(&t, 4, &m) == 1 && m[0].mac[5] == 9, "device 4: the fresh one only");
	CHECK(fdb_macs_of(&t, 3, &m) == 1 && m[0].mac[5] == 1, "device 3's stays");
	fdb_table_free(&fresh);
	CHECK_INT(fdb_table_replace_device(&t, 3, &fresh), 0, "device 3 emptied");
	CHECK_INT((int)t.n_macs, 1, "device 4's left");
	fdb_table_free(&t);
	CHECK(!t.macs && !t.n_macs, "freed");
}

int main(void)
{
	test_sorted_and_unsorted();
	test_replace_device();
	test_odd_entries();
	test_zebra_macs();
	return unit_summary("test_fdb_table");
}
