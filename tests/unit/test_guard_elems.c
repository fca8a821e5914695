// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_guard_elems.c - how the guard keeps a set's elements (kinds/guard_priv.c):
 * records of the longest key's size, sorted and made unique as memcmp over
 * a whole struct firewall_key orders them, read back whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/guard_priv.h"
#include "unit.h"

static int ref_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct firewall_key));
}

/*
 * elems_sort (an in-place radix sort from the first byte, insertion sort for
 * small buckets) orders and dedups as memcmp over the whole key does, at
 * sizes below, at and above the insertion sort's, and with keys alike up to
 * their last bytes (buckets big enough to be sorted by radix to the end).
 */
static void sort_like_qsort(size_t n, unsigned int seed, bool deep)
{
	struct firewall_elems l = {0};
	struct firewall_key *ref;
	size_t uniq = 0;

	ref = calloc(n, sizeof(*ref));
	CHECK_INT(elems_reserve(&l, n / 2), 0, "reserve");
	for (size_t i = 0; i < n; i++) {
		struct firewall_key k = {0};

		seed = seed * 1103515245U + 12345U;
		k.len = (seed >> 8) % 3 ? 8 : (seed >> 10) % 2 ? 3 : 20;
		/* few distinct values: duplicates, and bytes alike in most keys */
		for (size_t b = 0; b < k.len; b++) {
			seed = seed * 1103515245U + 12345U;
			bool varies = b == 7 || b == 19 || (b == 2 && !deep);

			k.b[b] = varies			       ? (uint8_t)(seed >> 16) % 5
				 : b == 3 && n > 1000 && !deep ? (uint8_t)(seed >> 20)
							       : 0;
		}
		ref[i] = k;
		CHECK_INT(elems_add(&l, &k), 0, "add");
	}
	elems_sort(&l);
	qsort(ref, n, sizeof(*ref), ref_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!uniq || memcmp(&ref[uniq - 1], &ref[i], sizeof(*ref)))
			ref[uniq++] = ref[i];
	}
	CHECK_INT((int)l.n, (int)uniq, "%zu keys: each key once", n);
	for (size_t i = 0; i < l.n && l.n == uniq; i++) {
		struct firewall_key got;

		elems_get(&l, i, &got);
		CHECK(!memcmp(&got, &ref[i], sizeof(got)), "%zu keys: key %zu in memcmp order", n,
		      i);
	}
	free(ref);
	elems_free(&l);
}

static void test_elems_sort(void)
{
	static const size_t sizes[] = {0, 1, 2, 5, 23, 24, 25, 100, 3000, 40000};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		sort_like_qsort(sizes[i], 17 + (unsigned int)i, false);
	sort_like_qsort(5000, 3, true); /* big buckets down to the last byte */
}

/* A longer key after shorter ones, with the array full: every record moves to the new size. */
static void test_restride(void)
{
	struct firewall_elems l = {0}, m = {0};
	struct firewall_key k, got;
	struct ip_addr a6 = {.family = AF_INET6, .bytes = {0x20, 0x01, 0x0d, 0xb8, [15] = 9}};

	for (long long vni = 0; vni < 16; vni++) {
		key_make(&k, NULL, 100 + vni);
		CHECK_INT(elems_add(&l, &k), 0, "VNI %lld", 100 + vni);
	}
	CHECK(l.n == 16 && l.cap == 16 && l.stride == 4, "full: 16 records of 4 bytes (cap %zu)",
	      l.cap);
	key_make(&k, &a6, 70000);
	CHECK_INT(elems_add(&l, &k), 0, "IPv6 . VNI");
	CHECK(l.n == 17 && l.cap > 16 && l.stride == 21, "17 records of 21 bytes (cap %zu)", l.cap);
	elems_get(&l, 16, &got);
	CHECK(!memcmp(&got, &k, sizeof(k)), "the long key read back whole");
	for (long long vni = 0; vni < 16; vni++) {
		key_make(&k, NULL, 100 + vni);
		elems_get(&l, (size_t)vni, &got);
		CHECK(!memcmp(&got, &k, sizeof(k)) && !elems_cmp(&l, (size_t)vni, &k),
		      "VNI %lld kept as it was", 100 + vni);
	}
	elems_sort(&l);
	elems_get(&l, 0, &got);
	CHECK_INT(got.len, 3, "shorter keys first (the length leads)");
	/* the same keys in another order: the same records */
	key_make(&k, &a6, 70000);
	CHECK_INT(elems_add(&m, &k), 0, "IPv6 first");
	for (long long vni = 15; vni >= 0; vni--) {
		key_make(&k, NULL, 100 + vni);
		CHECK_INT(elems_add(&m, &k), 0, "VNI %lld", 100 + vni);
	}
	elems_sort(&m);
	CHECK(elems_equal(&l, &m), "equal sets, whatever the order they came in");
	key_make(&k, NULL, 99);
	CHECK_INT(elems_add(&m, &k), 0, "one more");
	elems_sort(&m);
	CHECK(!elems_equal(&l, &m), "one more element: not equal");
	elems_free(&l);
	elems_free(&m);
}

/* Room made before the first element: the record size is known only then. */
static void test_reserve(void)
{
	struct firewall_elems l = {0};
	struct firewall_key k;

	CHECK_INT(elems_reserve(&l, 1000), 0, "reserve, empty");
	CHECK(l.rec == NULL && l.cap == 0, "nothing allocated yet");
	key_make(&k, NULL, 5);
	CHECK_INT(elems_add(&l, &k), 0, "first");
	CHECK(l.cap == 1000 && l.stride == 4, "room for 1000 records of 4 bytes (cap %zu)", l.cap);
	CHECK_INT(elems_reserve(&l, 2000), 0, "reserve more");
	CHECK_INT((int)l.cap, 2000, "grown");
	CHECK_INT(elems_reserve(&l, 10), 0, "reserve less");
	CHECK_INT((int)l.cap, 2000, "never shrinks");
	k.len = FW_KEY_MAX + 1;
	CHECK_INT(elems_add(&l, &k), -EINVAL, "a key longer than any refused");
	CHECK_INT((int)l.n, 1, "and not added");
	elems_free(&l);
	CHECK(l.rec == NULL && l.n == 0 && l.stride == 0, "freed: empty again");
}

int main(void)
{
	test_elems_sort();
	test_restride();
	test_reserve();
	return unit_summary("test_guard_elems");
}
