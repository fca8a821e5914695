// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_nl_batch.c - the netlink batch and error parser on their failure
 * paths: an allocation that fails while a message is committed must fail
 * that message's op (not drop it silently), and an NLMSG_ERROR whose echoed
 * length is bogus must not send the extack parser anywhere outside it.
 * Needs no root: the socket is only opened, never used to change anything.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "netlink/nl.h"
#include "unit.h"

static void *failing_grow(void *ptr, size_t size)
{
	(void)ptr;
	(void)size;
	return NULL;
}

struct seen {
	void *cookie;
	int err;
	int calls;
};

static void on_error(void *cookie, int err, const char *extack, void *data)
{
	struct seen *seen = data;

	(void)extack;
	seen->cookie = cookie;
	seen->err = err;
	seen->calls++;
}

static void test_commit_allocation_failure(void)
{
	struct seen seen = {0};
	struct nl_sock s;
	struct nl_batch *b;
	struct nlmsghdr *nlh;
	int op = 0;

	if (nl_open(&s, NETLINK_ROUTE) < 0) {
		CHECK(0, "cannot open a netlink socket");
		return;
	}
	b = nl_batch_new(&s, on_error, &seen);
	CHECK(b != NULL, "batch");
	if (!b)
		goto out;
	nl_batch_grow = failing_grow;
	nlh = nl_batch_msg(b, RTM_GETLINK, 0);
	CHECK(nlh != NULL, "nl_batch_msg never returns NULL");
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	nl_batch_commit(b, nlh, &op);
	nl_batch_grow = realloc;
	CHECK_INT(seen.calls, 1, "the dropped message's op heard of it");
	CHECK(seen.cookie == &op, "with its own cookie");
	CHECK_INT(seen.err, -ENOMEM, "as ENOMEM");
	CHECK_INT(nl_batch_finish(b), -ENOMEM, "and the batch fails");
out:
	nl_close(&s);
}

/*
 * Many small requests in one batch: the kernel answers each inside sendmsg,
 * before fabricd reads anything, so a batch must not hold more answers than
 * the socket's receive buffer (500 lookups of lo, each answered with the
 * whole link, about 1.5 KiB, and an ACK: 256 of them in one sendmsg overran
 * it with ENOBUFS).
 */
static void test_many_small_messages(void)
{
	struct seen seen = {0};
	struct nl_sock s;
	struct nl_batch *b;

	if (nl_open(&s, NETLINK_ROUTE) < 0) {
		CHECK(0, "cannot open a netlink socket");
		return;
	}
	b = nl_batch_new(&s, on_error, &seen);
	CHECK(b != NULL, "batch");
	for (int i = 0; b && i < 500; i++) {
		struct nlmsghdr *nlh = nl_batch_msg(b, RTM_GETLINK, 0);
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		ifi->ifi_index = 1; /* lo, in every network namespace */
		nl_batch_commit(b, nlh, NULL);
	}
	if (b)
		CHECK_INT(nl_batch_finish(b), 0, "500 lookups in one batch, no overrun");
	CHECK_INT(seen.calls, 0, "no op failed");
	nl_close(&s);
}

/*
 * An NLMSG_ERROR with extack TLVs claiming an echoed request of echo_len
 * bytes. Its echoed seq and pid are laid out as the TLV "bog" that a parser
 * wrapping echo_len - sizeof(nlmsghdr) around would find: with echo_len 8,
 * 20 + 8 - 16 puts it at byte 12 of the nlmsgerr. real_text follows as the
 * TLV a correct parser reads (when the error is capped).
 */
static void build_error(char *buf, uint32_t echo_len, const char *real_text)
{
	struct nlmsghdr *nlh;
	struct nlmsgerr *err;

	memset(buf, 0, 256);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_ACK_TLVS;
	err = mnl_nlmsg_put_extra_header(nlh, sizeof(*err));
	err->error = -EEXIST;
	err->msg.nlmsg_len = echo_len;
	err->msg.nlmsg_seq = (uint32_t)NLMSGERR_ATTR_MSG << 16 | 8; /* nla_len 8, nla_type */
	memcpy(&err->msg.nlmsg_pid, "bog", 4);
	if (real_text)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, real_text);
}

static void test_error_lengths(void)
{
	char buf[256] __attribute__((aligned(4))), extack[64];

	build_error(buf, 8, NULL);
	CHECK_INT(nl_parse_error((struct nlmsghdr *)buf, extack, sizeof(extack)), -EEXIST,
		  "the error itself survives a bogus echo length");
	CHECK_STR(extack, "", "nothing is read from a wrapped offset");
	build_error(buf, 4096, NULL);
	CHECK_INT(nl_parse_error((struct nlmsghdr *)buf, extack, sizeof(extack)), -EEXIST,
		  "an echo longer than the message");
	CHECK_STR(extack, "", "no extack from past the end");
	/* a proper, capped error still yields its text */
	build_error(buf, sizeof(struct nlmsghdr), "real");
	((struct nlmsghdr *)buf)->nlmsg_flags |= NLM_F_CAPPED;
	CHECK_INT(nl_parse_error((struct nlmsghdr *)buf, extack, sizeof(extack)), -EEXIST,
		  "capped");
	CHECK_STR(extack, "real", "capped: the TLV after the header");
	CHECK_INT(nl_parse_error((struct nlmsghdr *)buf, NULL, 0), -EEXIST, "no extack wanted");
}

int main(void)
{
	test_commit_allocation_failure();
	test_many_small_messages();
	test_error_lengths();
	return unit_summary("test_nl_batch");
}
