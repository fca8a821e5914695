// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kinds/fdb_table.c - the observed all-zeros FDB entries, compact (kinds/fdb.h):
 * IPv4 remotes as 8-byte keys, IPv6 ones whole, each array sorted by device
 * and address.
 */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"
#include "kinds/fdb.h"

static uint64_t v4_key(int ifindex, const uint8_t *b)
{
	return (uint64_t)(uint32_t)ifindex << 32 | (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static int key_ifindex(uint64_t key)
{
	return (int)(key >> 32);
}

static void key_addr(uint64_t key, struct ip_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->bytes[0] = (uint8_t)(key >> 24);
	a->bytes[1] = (uint8_t)(key >> 16);
	a->bytes[2] = (uint8_t)(key >> 8);
	a->bytes[3] = (uint8_t)key;
}

void fdb_table_free(struct fdb_table *t)
{
	free(t->v4);
	free(t->v6);
	free(t->odd);
	free(t->macs);
	memset(t, 0, sizeof(*t));
}

/* Room for n in *arr, whose size is always capacity_for(its count). 0 or -ENOMEM. */
static int reserve(void **arr, size_t have, size_t n, size_t size)
{
	void *grown;

	if (have && capacity_for(have) >= n)
		return 0;
	grown = realloc(*arr, capacity_for(n) * size);
	if (!grown)
		return -ENOMEM;
	*arr = grown;
	return 0;
}

int fdb_table_add(struct fdb_table *t, const struct fdb_entry *e)
{
	if (e->x.has) {
		if (reserve((void **)&t->odd, t->n_odd, t->n_odd + 1, sizeof(*t->odd)) < 0)
			return -ENOMEM;
		t->odd[t->n_odd++] = *e;
		return 0;
	}
	if (e->dst.family == AF_INET) {
		if (reserve((void **)&t->v4, t->n_v4, t->n_v4 + 1, sizeof(*t->v4)) < 0)
			return -ENOMEM;
		t->v4[t->n_v4++] = v4_key(e->ifindex, e->dst.bytes);
	} else {
		if (reserve((void **)&t->v6, t->n_v6, t->n_v6 + 1, sizeof(*t->v6)) < 0)
			return -ENOMEM;
		t->v6[t->n_v6++] = (struct fdb_v6){e->ifindex, e->dst};
	}
	t->n++;
	t->sorted = false;
	return 0;
}

int fdb_table_add_mac(struct fdb_table *t, const struct fdb_mac *m)
{
	if (reserve((void **)&t->macs, t->n_macs, t->n_macs + 1, sizeof(*t->macs)) < 0)
		return -ENOMEM;
	t->macs[t->n_macs++] = *m;
	return 0;
}

int fdb_table_take(struct fdb_table *t, const struct nlmsghdr *nlh, int ifindex)
{
	struct fdb_entry e;
	struct fdb_mac m;

	if (nlh->nlmsg_type != RTM_NEWNEIGH)
		return 0;
	if (fdb_parse(nlh, &e) > 0)
		return !ifindex || e.ifindex == ifindex ? fdb_table_add(t, &e) : 0;
	if (fdb_parse_mac(nlh, &m) > 0)
		return !ifindex || m.ifindex == ifindex ? fdb_table_add_mac(t, &m) : 0;
	return 0;
}

static int v4_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int v6_key_cmp(const struct fdb_v6 *a, int ifindex, const uint8_t *bytes)
{
	if (a->ifindex != ifindex)
		return a->ifindex < ifindex ? -1 : 1;
	return memcmp(a->dst.bytes, bytes, 16);
}

static int v6_cmp(const void *a, const void *b)
{
	const struct fdb_v6 *y = b;

	return v6_key_cmp(a, y->ifindex, y->dst.bytes);
}

static int v6_ifindex(const void *e)
{
	return ((const struct fdb_v6 *)e)->ifindex;
}

static int v4_ifindex(const void *key)
{
	return key_ifindex(*(const uint64_t *)key);
}

/*
 * The kernel dumps device by device, so the entries usually come grouped by
 * ifindex in ascending order: then only each device's entries are sorted
 * (63 at a time instead of 64,512 at once).
 */
static void sort_groups(void *arr, size_t n, size_t size, int (*ifindex_of)(const void *),
			int (*cmp)(const void *, const void *))
{
	char *a = arr;
	size_t i = 1;

	while (i < n && ifindex_of(a + (i - 1) * size) <= ifindex_of(a + i * size))
		i++;
	if (i < n) {
		qsort(a, n, size, cmp);
		return;
	}
	for (size_t lo = 0; lo < n; lo = i) {
		int ifindex = ifindex_of(a + lo * size);

		for (i = lo + 1; i < n && ifindex_of(a + i * size) == ifindex; i++)
			;
		if (i - lo > 1)
			qsort(a + lo * size, i - lo, size, cmp);
	}
}

static int mac_key_cmp(const struct fdb_mac *a, int ifindex, const uint8_t *mac, bool master)
{
	int c;

	if (a->ifindex != ifindex)
		return a->ifindex < ifindex ? -1 : 1;
	c = memcmp(a->mac, mac, 6);
	return c ? c : (int)a->master - (int)master;
}

static int mac_cmp(const void *a, const void *b)
{
	const struct fdb_mac *y = b;

	return mac_key_cmp(a, y->ifindex, y->mac, y->master);
}

static int mac_ifindex(const void *e)
{
	return ((const struct fdb_mac *)e)->ifindex;
}

void fdb_table_sort(struct fdb_table *t)
{
	sort_groups(t->v4, t->n_v4, sizeof(*t->v4), v4_ifindex, v4_cmp);
	sort_groups(t->v6, t->n_v6, sizeof(*t->v6), v6_ifindex, v6_cmp);
	sort_groups(t->macs, t->n_macs, sizeof(*t->macs), mac_ifindex, mac_cmp);
	t->sorted = true;
}

/* The first MAC entry of a device >= ifindex (sorted), or n_macs. */
static size_t mac_lower(const struct fdb_table *t, int ifindex)
{
	static const uint8_t none[6];
	size_t lo = 0, hi = t->n_macs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mac_key_cmp(&t->macs[mid], ifindex, none, false) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t fdb_macs_of(const struct fdb_table *t, int ifindex, const struct fdb_mac **first)
{
	size_t lo = mac_lower(t, ifindex), hi = lo;

	while (hi < t->n_macs && t->macs[hi].ifindex == ifindex)
		hi++;
	*first = t->macs + lo;
	return hi - lo;
}

/* The first IPv4 key >= key (sorted), or n_v4. */
static size_t v4_lower(const struct fdb_table *t, uint64_t key)
{
	return u64_lower_bound(t->v4, t->n_v4, key);
}

/* The first IPv6 entry not below (ifindex, bytes) (sorted), or n_v6. */
static size_t v6_lower(const struct fdb_table *t, int ifindex, const uint8_t *bytes)
{
	size_t lo = 0, hi = t->n_v6;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v6_key_cmp(&t->v6[mid], ifindex, bytes) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const uint8_t zero_addr[16];

bool fdb_has(const struct fdb_table *t, int ifindex, const struct ip_addr *dst)
{
	if (dst->family == AF_INET) {
		uint64_t key = v4_key(ifindex, dst->bytes);

		if (t->sorted) {
			size_t i = v4_lower(t, key);

			return i < t->n_v4 && t->v4[i] == key;
		}
		for (size_t i = 0; i < t->n_v4; i++) {
			if (t->v4[i] == key)
				return true;
		}
		return false;
	}
	if (dst->family != AF_INET6)
		return false;
	if (t->sorted) {
		size_t i = v6_lower(t, ifindex, dst->bytes);

		return i < t->n_v6 && !v6_key_cmp(&t->v6[i], ifindex, dst->bytes);
	}
	for (size_t i = 0; i < t->n_v6; i++) {
		if (!v6_key_cmp(&t->v6[i], ifindex, dst->bytes))
			return true;
	}
	return false;
}

void fdb_cursor_start(const struct fdb_table *t, int ifindex, struct fdb_cursor *c)
{
	c->ifindex = ifindex;
	c->v4 = t->sorted ? v4_lower(t, v4_key(ifindex, zero_addr)) : 0;
	c->v6 = t->sorted ? v6_lower(t, ifindex, zero_addr) : 0;
}

bool fdb_next(const struct fdb_table *t, struct fdb_cursor *c, struct ip_addr *dst)
{
	/* sorted: the device's entries are contiguous, so the first other device ends them */
	for (; c->v4 < t->n_v4; c->v4++) {
		if (key_ifindex(t->v4[c->v4]) == c->ifindex) {
			key_addr(t->v4[c->v4++], dst);
			return true;
		}
		if (t->sorted)
			c->v4 = t->n_v4 - 1;
	}
	for (; c->v6 < t->n_v6; c->v6++) {
		if (t->v6[c->v6].ifindex == c->ifindex) {
			*dst = t->v6[c->v6++].dst;
			return true;
		}
		if (t->sorted)
			c->v6 = t->n_v6 - 1;
	}
	return false;
}

bool fdb_has_device(const struct fdb_table *t, int ifindex)
{
	struct fdb_cursor c;
	struct ip_addr a;

	for (size_t i = 0; i < t->n_odd; i++) {
		if (t->odd[i].ifindex == ifindex)
			return true;
	}
	fdb_cursor_start(t, ifindex, &c);
	return fdb_next(t, &c, &a);
}

/* Replaces arr[lo, hi) (of *n, elements of size, with room reserved) with fresh[0, n_fresh). */
static void splice(char *arr, size_t *n, size_t lo, size_t hi, const void *fresh, size_t n_fresh,
		   size_t size)
{
	if (arr) {
		memmove(arr + (lo + n_fresh) * size, arr + hi * size, (*n - hi) * size);
		if (n_fresh)
			memcpy(arr + lo * size, fresh, n_fresh * size);
	}
	*n = *n - (hi - lo) + n_fresh;
}

/* The odd entries of device ifindex replaced with fresh's (the last step that can fail). */
static int replace_odd(struct fdb_table *t, int ifindex, const struct fdb_table *fresh)
{
	size_t kept = 0;

	if (fresh->n_odd &&
	    reserve((void **)&t->odd, t->n_odd, t->n_odd + fresh->n_odd, sizeof(*t->odd)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_odd; i++) {
		if (t->odd[i].ifindex != ifindex)
			t->odd[kept++] = t->odd[i];
	}
	if (fresh->n_odd)
		memcpy(t->odd + kept, fresh->odd, fresh->n_odd * sizeof(*t->odd));
	t->n_odd = kept + fresh->n_odd;
	return 0;
}

int fdb_table_replace_device(struct fdb_table *t, int ifindex, const struct fdb_table *fresh)
{
	size_t lo4 = v4_lower(t, v4_key(ifindex, zero_addr)), hi4 = lo4;
	size_t lo6 = v6_lower(t, ifindex, zero_addr), hi6 = lo6;
	const struct fdb_mac *macs;
	size_t lom = mac_lower(t, ifindex), n_macs = fdb_macs_of(t, ifindex, &macs);

	while (hi4 < t->n_v4 && key_ifindex(t->v4[hi4]) == ifindex)
		hi4++;
	while (hi6 < t->n_v6 && t->v6[hi6].ifindex == ifindex)
		hi6++;
	/* all reserved before any moves: a failure leaves t as it was */
	if (reserve((void **)&t->v4, t->n_v4, t->n_v4 - (hi4 - lo4) + fresh->n_v4, sizeof(*t->v4)) <
		0 ||
	    reserve((void **)&t->v6, t->n_v6, t->n_v6 - (hi6 - lo6) + fresh->n_v6, sizeof(*t->v6)) <
		0 ||
	    reserve((void **)&t->macs, t->n_macs, t->n_macs - n_macs + fresh->n_macs,
		    sizeof(*t->macs)) < 0)
		return -ENOMEM;
	if (replace_odd(t, ifindex, fresh) < 0)
		return -ENOMEM;
	splice((char *)t->v4, &t->n_v4, lo4, hi4, fresh->v4, fresh->n_v4, sizeof(*t->v4));
	splice((char *)t->v6, &t->n_v6, lo6, hi6, fresh->v6, fresh->n_v6, sizeof(*t->v6));
	splice((char *)t->macs, &t->n_macs, lom, lom + n_macs, fresh->macs, fresh->n_macs,
	       sizeof(*t->macs));
	t->n = t->n_v4 + t->n_v6;
	return 0;
}
