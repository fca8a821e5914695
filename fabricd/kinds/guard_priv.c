// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard_priv.c - what kinds/guard.c (the kernel's copy) and kinds/guard_render.c
 * (the rendering) share, declared in guard_priv.h: a growing string, string
 * lists, set elements as keys with their text form, and the summary format.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/guard.h"
#include "kinds/guard_priv.h"

/* --- a growing string ---------------------------------------------------------- */

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->cap ? b->buf + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *grown = realloc(b->buf, cap);

		if (!grown) {
			b->failed = true;
			return;
		}
		b->buf = grown;
		b->cap = cap;
	}
}

char *sbuf_take(struct sbuf *b)
{
	char *s = b->failed ? NULL : b->buf;

	if (b->failed)
		free(b->buf);
	else if (!s)
		s = strdup("");
	memset(b, 0, sizeof(*b));
	return s;
}

/* --- string lists ------------------------------------------------------------------- */

int strlist_add(struct strlist *l, const char *s)
{
	char *copy;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	l->v[l->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strlist_sort(struct strlist *l)
{
	size_t out = 0;

	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
	/* a set holds each element once */
	for (size_t i = 0; i < l->n; i++) {
		if (out && !strcmp(l->v[out - 1], l->v[i]))
			free(l->v[i]);
		else
			l->v[out++] = l->v[i];
	}
	l->n = out;
}

void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* --- set elements -------------------------------------------------------------- */

int key_cmp(const struct firewall_key *a, const struct firewall_key *b)
{
	return memcmp(a, b, sizeof(*a));
}

/* A record is a key's first bytes: its length, then the key itself. */
_Static_assert(sizeof(struct firewall_key) == 1 + FW_KEY_MAX, "a key is its length and bytes");

/*
 * memcpy of a record (n: 1 + a key's length): each case a constant size the
 * compiler turns into a few moves. A call to memcpy for every swap of the
 * sort made rendering the guard twice as slow.
 */
static inline void rec_copy(uint8_t *d, const uint8_t *s, size_t n)
{
	switch (n) {
	case 4:
		memcpy(d, s, 4);
		break;
	case 5:
		memcpy(d, s, 5);
		break;
	case 9:
		memcpy(d, s, 9);
		break;
	case 17:
		memcpy(d, s, 17);
		break;
	case 21:
		memcpy(d, s, 21);
		break;
	default:
		memcpy(d, s, n);
	}
}

/* A record of stride bytes: the key's length, its bytes, zeros. */
static void rec_put(uint8_t *rec, size_t stride, const struct firewall_key *k)
{
	rec_copy(rec, (const uint8_t *)k, 1 + (size_t)k->len);
	if (1 + (size_t)k->len < stride)
		memset(rec + 1 + k->len, 0, stride - 1 - k->len);
}

void elems_get(const struct firewall_elems *l, size_t i, struct firewall_key *out)
{
	const uint8_t *rec = l->rec + i * l->stride;

	memset(out, 0, sizeof(*out));
	rec_copy((uint8_t *)out, rec, 1 + (size_t)rec[0]);
}

int elems_cmp(const struct firewall_elems *l, size_t i, const struct firewall_key *k)
{
	struct firewall_key have;

	elems_get(l, i, &have);
	return key_cmp(&have, k);
}

/* Every record stride bytes apart (a longer key came): the array made anew. */
static int restride(struct firewall_elems *l, size_t stride, size_t cap)
{
	uint8_t *rec = malloc(cap * stride);
	struct firewall_key k;

	if (!rec)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		elems_get(l, i, &k);
		rec_put(rec + i * stride, stride, &k);
	}
	free(l->rec);
	l->rec = rec;
	l->stride = stride;
	l->cap = cap;
	return 0;
}

int elems_add(struct firewall_elems *l, const struct firewall_key *k)
{
	size_t stride = 1 + (size_t)k->len;

	if (k->len > FW_KEY_MAX)
		return -EINVAL;
	if (stride > l->stride || !l->rec) {
		size_t cap = l->cap > l->reserve ? l->cap : l->reserve;

		if (cap <= l->n)
			cap = 2 * l->n;
		if (restride(l, stride > l->stride ? stride : l->stride, cap > 16 ? cap : 16) < 0)
			return -ENOMEM;
	} else if (l->n == l->cap) {
		uint8_t *grown = realloc(l->rec, 2 * l->cap * l->stride);

		if (!grown)
			return -ENOMEM;
		l->rec = grown;
		l->cap *= 2;
	}
	rec_put(l->rec + l->n * l->stride, l->stride, k);
	l->n++;
	return 0;
}

int elems_reserve(struct firewall_elems *l, size_t n)
{
	uint8_t *grown;

	if (!l->rec) {
		l->reserve = n; /* the size of a record is known at the first element */
		return 0;
	}
	if (l->cap >= n)
		return 0;
	grown = realloc(l->rec, n * l->stride);
	if (!grown)
		return -ENOMEM;
	l->rec = grown;
	l->cap = n;
	return 0;
}

/* v[0, n) records of stride bytes, ordered by memcmp from byte on (their earlier bytes alike). */
static void insertion_sort(uint8_t *v, size_t n, size_t stride, size_t byte)
{
	uint8_t k[1 + FW_KEY_MAX];

	for (size_t i = 1; i < n; i++) {
		size_t j = i;

		rec_copy(k, v + i * stride, stride);
		while (j > 0 && memcmp(v + (j - 1) * stride + byte, k + byte, stride - byte) > 0) {
			rec_copy(v + j * stride, v + (j - 1) * stride, stride);
			j--;
		}
		rec_copy(v + j * stride, k, stride);
	}
}

#define MSD_SMALL 24 /* fewer keys than this: insertion sort */

/*
 * v[0, n) records of stride bytes ordered by memcmp from byte on (their
 * earlier bytes alike): an in-place radix sort from the first byte (American
 * flag sort). Bytes every key has alike are skipped (padding is zero, the
 * length mostly one); each other byte puts the keys into their 256 buckets by
 * swapping, and each bucket is sorted by the next byte. In place: a second
 * array of the keys was that many more fresh pages every daemon pass
 * (README, "Scale").
 */
static void msd_sort(uint8_t *v, size_t n, size_t stride, size_t byte)
{
	size_t count[256], next[256], at = 0;
	uint8_t k[1 + FW_KEY_MAX], t[1 + FW_KEY_MAX];

	while (n >= MSD_SMALL && byte < stride) {
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[v[i * stride + byte]]++;
		if (count[v[byte]] < n)
			break;
		byte++; /* all alike: nothing to order by */
	}
	if (byte == stride)
		return;
	if (n < MSD_SMALL) {
		insertion_sort(v, n, stride, byte);
		return;
	}
	for (size_t c = 0; c < 256; c++) {
		next[c] = at;
		at += count[c];
	}
	/* each bucket's next free place, its end the next bucket's start */
	for (size_t c = 0, end = 0; c < 256; c++) {
		end += count[c];
		while (next[c] < end) {
			uint8_t b;

			rec_copy(k, v + next[c] * stride, stride);
			b = k[byte];
			while (b != c) {
				rec_copy(t, v + next[b] * stride, stride);
				rec_copy(v + next[b]++ * stride, k, stride);
				rec_copy(k, t, stride);
				b = k[byte];
			}
			rec_copy(v + next[c]++ * stride, k, stride);
		}
	}
	for (size_t c = 0, lo = 0; c < 256; lo += count[c], c++) {
		if (count[c] > 1)
			msd_sort(v + lo * stride, count[c], stride, byte + 1);
	}
}

/* Whether every record is less than the next: sorted, each once. */
static bool elems_ordered(const struct firewall_elems *l)
{
	for (size_t i = 1; i < l->n; i++) {
		if (memcmp(l->rec + (i - 1) * l->stride, l->rec + i * l->stride, l->stride) >= 0)
			return false;
	}
	return true;
}

void elems_sort(struct firewall_elems *l)
{
	size_t out = 0, s = l->stride;

	/* the guard's member pairs are made in order (kinds/guard_render.c) */
	if (elems_ordered(l))
		return;
	if (l->n > 1)
		msd_sort(l->rec, l->n, s, 0);
	for (size_t i = 0; i < l->n; i++) {
		if (!out || memcmp(l->rec + (out - 1) * s, l->rec + i * s, s)) {
			if (out != i)
				rec_copy(l->rec + out * s, l->rec + i * s, s);
			out++;
		}
	}
	l->n = out;
}

/* The same keys make the same records: a set's stride follows from its longest key. */
bool elems_equal(const struct firewall_elems *a, const struct firewall_elems *b)
{
	return a->n == b->n &&
	       (!a->n || (a->stride == b->stride && !memcmp(a->rec, b->rec, a->n * a->stride)));
}

void elems_free(struct firewall_elems *l)
{
	free(l->rec);
	memset(l, 0, sizeof(*l));
}

void key_make(struct firewall_key *k, const struct ip_addr *addr, long long vni)
{
	size_t alen = addr ? ip_addr_len(addr) : 0;

	memset(k, 0, sizeof(*k));
	memcpy(k->b, addr ? addr->bytes : k->b, alen);
	k->len = (uint8_t)alen;
	if (vni >= 0) {
		k->b[alen] = (uint8_t)(vni >> 16);
		k->b[alen + 1] = (uint8_t)(vni >> 8);
		k->b[alen + 2] = (uint8_t)vni;
		/* alone a VNI is 3 bytes; in a concatenation it takes a whole register */
		k->len = (uint8_t)(alen ? alen + 4 : 3);
	}
}

static unsigned int key_vni(const uint8_t *b)
{
	return (unsigned int)b[0] << 16 | (unsigned int)b[1] << 8 | b[2];
}

void key_text(const struct firewall_key *k, char *out, size_t len)
{
	struct ip_addr a = {0};
	char ip[IP_ADDR_STRLEN];
	size_t alen = k->len == 4 || k->len == 8 ? 4 : 16, used = 0;

	if (k->len == 3) {
		snprintf(out, len, "%u", key_vni(k->b));
		return;
	}
	if (k->len != 4 && k->len != 8 && k->len != 16 && k->len != 20) {
		/* not a key fabricd makes: shown as it is, never equal to a rendered one */
		snprintf(out, len, "0x");
		for (size_t i = 0; i < k->len && i < FW_KEY_MAX && used + 5 < len; i++)
			used += (size_t)snprintf(out + 2 + used, len - 2 - used, "%02x", k->b[i]);
		return;
	}
	a.family = alen == 4 ? AF_INET : AF_INET6;
	memcpy(a.bytes, k->b, alen);
	ip_addr_str(&a, ip, sizeof(ip));
	if (k->len == alen)
		snprintf(out, len, "%s", ip);
	else
		snprintf(out, len, "%s . %u", ip, key_vni(k->b + alen));
}

static int parse_vni(const char *s, long long *vni)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v > 0xffffff)
		return -EINVAL;
	*vni = (long long)v;
	return 0;
}

int key_parse(const char *text, struct firewall_key *k)
{
	const char *dot = strstr(text, " . ");
	char part[IP_ADDR_STRLEN + 8];
	struct ip_addr a;
	long long vni = -1;

	if (!dot) {
		if (ip_addr_parse(text, &a) == 0) {
			key_make(k, &a, -1);
			return 0;
		}
		if (parse_vni(text, &vni) < 0)
			return -EINVAL;
		key_make(k, NULL, vni);
		return 0;
	}
	if ((size_t)(dot - text) >= sizeof(part))
		return -EINVAL;
	snprintf(part, sizeof(part), "%.*s", (int)(dot - text), text);
	if (ip_addr_parse(part, &a) < 0 || parse_vni(dot + 3, &vni) < 0)
		return -EINVAL;
	key_make(k, &a, vni);
	return 0;
}

const char *const firewall_set_names[FW_N_SETS] = {
    [FW_SET_PLAIN_MEMBERS] = "plain_members",	[FW_SET_SECURE_VNIS] = "secure_vnis",
    [FW_SET_WG_IP] = "wireguard_peers_ip",	[FW_SET_WG_IP6] = "wireguard_peers_ip6",
    [FW_SET_CARRIED_VNIS] = "carried_vnis",	[FW_SET_CARRIED_MEMBERS] = "carried_members",
    [FW_SET_FABRIC_MEMBERS] = "fabric_members", [FW_SET_NODE_VNIS] = "node_vnis",
};

enum firewall_set_id firewall_set_by_name(const char *name)
{
	int i = 0;

	while (i < FW_N_SETS && strcmp(name, firewall_set_names[i]))
		i++;
	return (enum firewall_set_id)i;
}

char *summary_join(struct strlist *lines)
{
	struct sbuf b = {0};

	strlist_sort(lines);
	for (size_t i = 0; i < lines->n; i++)
		sbuf_printf(&b, "%s\n", lines->v[i]);
	return sbuf_take(&b);
}
