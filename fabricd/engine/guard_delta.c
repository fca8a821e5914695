// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/guard_delta.c - a change of the guard's set elements only, sent as
 * one nftables transaction over netlink: NFT_MSG_NEWSETELEM and
 * NFT_MSG_DELSETELEM between a batch's begin and end, in one send.
 *
 * Why not libnftables, as for whole tables: a delta is what the daemon sends
 * whenever a vnet or a node comes or goes, before the vnet's links (the
 * guard lets its VXLAN in first), and libnftables took 3-4 ms for a one-vnet
 * delta of 63 elements, nearly all of it page faults in its fresh
 * allocations after each pass's malloc_trim (README, "Scale"); this takes a
 * few kilobytes. What is sent is the text the plan shows (kinds/guard.c,
 * delta_text), each line parsed back into keys, so `plan` and the kernel
 * never disagree. Lines of another shape and deltas larger than one send
 * holds are left to libnftables (firewall_apply).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "engine/guard_io.h"
#include "kinds/guard_priv.h"
#include "netlink/nl.h"

/* more than this goes through libnftables: one send must hold the whole transaction */
#define DELTA_MAX_ELEMS 2048
/* elements per message: a message's element list is one attribute, at most 64 KiB */
#define ELEMS_PER_MSG 512
/* room per element: its list entry, key and value attributes, and the key (at most 20) */
#define ELEM_ROOM 48

struct delta_line {
	bool add;
	char set[32];
	struct firewall_key *keys;
	size_t n;
};

struct delta {
	struct delta_line *lines;
	size_t n, total;
};

static void delta_free(struct delta *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->lines[i].keys);
	free(d->lines);
}

/* "a . b, c . d" into keys; false on an element key_parse does not know. */
static bool parse_elems(const char *s, const char *end, struct delta_line *l)
{
	size_t cap = 1;

	for (const char *p = s; p < end; p++)
		cap += *p == ',';
	l->keys = calloc(cap, sizeof(*l->keys));
	if (!l->keys)
		return false;
	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *stop = comma ? comma : end;
		char one[96];

		while (s < stop && *s == ' ')
			s++;
		if (s == stop || (size_t)(stop - s) >= sizeof(one))
			return false;
		memcpy(one, s, (size_t)(stop - s));
		one[stop - s] = '\0';
		if (key_parse(one, &l->keys[l->n++]) < 0)
			return false;
		s = comma ? comma + 1 : end;
	}
	return l->n > 0;
}

/* One line: "add element inet fabricd SET { ... }" or "delete element ...". */
static bool parse_line(const char *s, size_t len, struct delta_line *l)
{
	static const char add[] = "add element " TABLE_NAME " ";
	static const char del[] = "delete element " TABLE_NAME " ";
	const char *open, *end = s + len;
	size_t n;

	memset(l, 0, sizeof(*l));
	if (len > strlen(add) && !strncmp(s, add, strlen(add))) {
		l->add = true;
		s += strlen(add);
	} else if (len > strlen(del) && !strncmp(s, del, strlen(del))) {
		s += strlen(del);
	} else {
		return false;
	}
	open = memchr(s, ' ', (size_t)(end - s));
	n = open ? (size_t)(open - s) : 0;
	if (!open || !n || n >= sizeof(l->set) || end - open < 5 || strncmp(open, " { ", 3) ||
	    strncmp(end - 2, " }", 2))
		return false;
	memcpy(l->set, s, n);
	if (firewall_set_by_name(l->set) >= FW_N_SETS)
		return false;
	return parse_elems(open + 3, end - 2, l);
}

/*
 * The delta text (after its mark, when marked) as lines of keys. 0, 1 (not a
 * shape sent here, or more than one send holds), or -ENOMEM.
 */
static int parse_delta(const char *text, bool marked, struct delta *d)
{
	const char *s = text;

	memset(d, 0, sizeof(*d));
	if (marked && strncmp(text, FIREWALL_DELTA_MARK, strlen(FIREWALL_DELTA_MARK)))
		return 1;
	if (marked)
		s += strlen(FIREWALL_DELTA_MARK);
	while (*s) {
		size_t len = strcspn(s, "\n");
		struct delta_line *grown = realloc(d->lines, (d->n + 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		d->lines = grown;
		if (!parse_line(s, len, &d->lines[d->n])) {
			free(d->lines[d->n].keys);
			return 1;
		}
		d->total += d->lines[d->n++].n;
		if (d->total > DELTA_MAX_ELEMS)
			return 1;
		s += len + (s[len] == '\n');
	}
	return 0;
}

static struct nlmsghdr *put_msg(char *at, uint16_t type, uint16_t flags, uint8_t family,
				uint16_t res_id, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(at);
	struct nfgenmsg *nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(res_id);
	return nlh;
}

/* Keys [from, to) of one line as one message at buf + *off. */
static void put_elems(char *buf, size_t *off, const struct delta_line *l, size_t from, size_t to,
		      uint32_t seq)
{
	uint16_t type =
	    (NFNL_SUBSYS_NFTABLES << 8) | (l->add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
	struct nlmsghdr *nlh = put_msg(buf + *off, type, (l->add ? NLM_F_CREATE : 0) | NLM_F_ACK,
				       NFPROTO_INET, 0, seq);
	struct nlattr *list, *elem, *key;

	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, FIREWALL_TABLE);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, l->set);
	list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (size_t i = from; i < to; i++) {
		elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
		key = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
		mnl_attr_put(nlh, NFTA_DATA_VALUE, l->keys[i].len, l->keys[i].b);
		mnl_attr_nest_end(nlh, key);
		mnl_attr_nest_end(nlh, elem);
	}
	mnl_attr_nest_end(nlh, list);
	*off += nlh->nlmsg_len;
}

/* The transaction; *n_acked how many of its messages ask for an answer. NULL on ENOMEM. */
static char *build_batch(const struct delta *d, size_t *len, size_t *n_acked)
{
	size_t room = 4 * MNL_NLMSG_HDRLEN + (d->n + d->total / ELEMS_PER_MSG + 1) * 256 +
		      d->total * ELEM_ROOM;
	char *buf = calloc(1, room);
	uint32_t seq = 1;
	size_t off = 0;

	if (!buf)
		return NULL;
	*n_acked = 0;
	off += put_msg(buf, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, seq++)
		   ->nlmsg_len;
	for (size_t i = 0; i < d->n; i++) {
		for (size_t from = 0; from < d->lines[i].n; from += ELEMS_PER_MSG) {
			size_t to = from + ELEMS_PER_MSG < d->lines[i].n ? from + ELEMS_PER_MSG
									 : d->lines[i].n;

			put_elems(buf, &off, &d->lines[i], from, to, seq++);
			(*n_acked)++;
		}
	}
	off += put_msg(buf + off, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, seq)
		   ->nlmsg_len;
	*len = off;
	return buf;
}

/*
 * The kernel's answers, all queued by the time the send returns (netlink
 * runs the batch in the sender's context): every message acknowledged, or
 * the first error. 0 or -errno, err filled.
 */
static int read_answers(struct nl_sock *s, size_t n_acked, char *err, size_t errlen)
{
	char buf[8192];
	size_t acked = 0;

	for (;;) {
		ssize_t got = recv(mnl_socket_get_fd(s->mnl), buf, sizeof(buf), MSG_DONTWAIT);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		int left = (int)got;

		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (got < 0)
			return snprintf(err, errlen, "%s", strerror(errno)), -errno;
		for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			int ret;

			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			ret = nl_parse_error(nlh, err, errlen);
			if (ret < 0) {
				if (!err[0])
					snprintf(err, errlen, "%s", strerror(-ret));
				return ret;
			}
			acked++;
		}
	}
	if (acked == n_acked)
		return 0;
	snprintf(err, errlen, "the kernel answered %zu of %zu set element messages", acked,
		 n_acked);
	return -EIO;
}

static int send_delta(const char *text, bool marked, char *err, size_t errlen)
{
	struct nl_sock s = {0};
	struct delta d;
	size_t len = 0, n_acked = 0;
	char *batch = NULL;
	int ret;

	err[0] = '\0';
	ret = parse_delta(text, marked, &d);
	if (ret == 0) {
		batch = build_batch(&d, &len, &n_acked);
		ret = batch ? 0 : -ENOMEM;
	}
	delta_free(&d);
	if (ret == 0)
		ret = nl_open(&s, NETLINK_NETFILTER);
	if (ret == 0 && mnl_socket_sendto(s.mnl, batch, len) < 0)
		ret = errno == EMSGSIZE ? 1 : -errno; /* more than the socket takes at once */
	else if (ret == 0)
		ret = read_answers(&s, n_acked, err, errlen);
	if (ret < 0 && !err[0])
		snprintf(err, errlen, "%s", strerror(-ret));
	if (s.mnl)
		nl_close(&s);
	free(batch);
	return ret;
}

int firewall_delta_send(const char *text, char *err, size_t errlen)
{
	return send_delta(text, true, err, errlen);
}

int firewall_load_send(const char *text, char *err, size_t errlen)
{
	return send_delta(text, false, err, errlen);
}
