// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * genl_link.c - kernel WireGuard, the link itself over rtnetlink: created
 * together with its owner mark (two messages, one sendmsg), looked up by
 * name and kind, and deleted.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/wireguard.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "kinds/link.h"
#include "netlink/ifindex.h"
#include "netlink/nl.h"
#include "wireguard/genl.h"

/* ---- pure: the create request ---- */

/* An RTM_NEWLINK request naming the link by IFLA_IFNAME; NULL when buflen is too small. */
static struct nlmsghdr *put_newlink(void *buf, size_t buflen, uint16_t flags, uint32_t seq,
				    uint32_t portid, const char *ifname)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	if (buflen < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*ifi)))
		return NULL;
	memset(buf, 0, buflen);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = portid;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	return mnl_attr_put_strz_check(nlh, buflen, IFLA_IFNAME, ifname) ? nlh : NULL;
}

size_t wg_genl_encode_create(const char *ifname, const char *alias, uint32_t seq, uint32_t portid,
			     void *buf, size_t buflen)
{
	struct nlmsghdr *create, *mark;
	struct nlattr *linkinfo = NULL;
	size_t len;

	/* libmnl's checks leave out an attribute's padding: keep the limit aligned */
	buflen -= buflen % NLMSG_ALIGNTO;
	if (!alias || !*alias || strlen(alias) > WG_ALIAS_MAX)
		return 0;
	create = put_newlink(buf, buflen, NLM_F_CREATE | NLM_F_EXCL, seq, portid, ifname);
	if (create)
		linkinfo = mnl_attr_nest_start_check(create, buflen, IFLA_LINKINFO);
	if (!linkinfo || !mnl_attr_put_strz_check(create, buflen, IFLA_INFO_KIND, WG_GENL_NAME))
		return 0;
	mnl_attr_nest_end(create, linkinfo);
	len = NLMSG_ALIGN(create->nlmsg_len);
	mark = put_newlink((char *)buf + len, buflen - len, 0, seq + 1, portid, ifname);
	if (!mark || !mnl_attr_put_strz_check(mark, buflen - len, IFLA_IFALIAS, alias))
		return 0;
	return len + mark->nlmsg_len;
}

/* ---- I/O ---- */

/* The reply, parsed as every link is (kinds/link.c). */
static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_obs l;

	if (link_parse(nlh, &l) == 0) {
		l.alias = NULL; /* it points into the reply, gone after the request: not used */
		*(struct link_obs *)data = l;
	}
	return MNL_CB_OK;
}

/* RTM_GETLINK by name: ifindex and kind ("" for links without one). 0, -ENODEV. */
static int link_lookup(struct nl_sock *s, const char *ifname, struct link_obs *info)
{
	char buf[NL_MSG_BUF] = {0}; /* libmnl before 1.0.5 leaves attribute padding as it was */
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);
	memset(info, 0, sizeof(*info));
	return nl_request(s, nlh, link_cb, info);
}

/* The process's rtnetlink socket (netlink/nl.h); NULL with errno and wg_last_error() set. */
static struct nl_sock *route_socket(const char *ifname)
{
	struct nl_sock *s = nl_route_shared();

	if (!s)
		wg_set_last_error("%s: cannot open an rtnetlink socket: %s", ifname,
				  strerror(errno));
	return s;
}

/* The outcome of one message of a batch, by its cookie. */
struct ack {
	int err;
	char extack[NL_EXTACK_MAX];
};

static void ack_error(void *cookie, int err, const char *extack, void *data)
{
	struct ack *a = cookie ? cookie : data;

	if (!a->err) {
		a->err = err;
		snprintf(a->extack, sizeof(a->extack), "%s", extack);
	}
}

/* Queues an encoded request as it is, under the batch's next sequence number. */
static int batch_put(struct nl_batch *b, const struct nlmsghdr *msg, struct ack *cookie)
{
	struct nlmsghdr *nlh = NULL;
	uint32_t seq;

	/* nl_batch_msg() leaves NL_MSG_BUF bytes of room, as nl_msg_start() does */
	if (msg->nlmsg_len <= NL_MSG_BUF)
		nlh = nl_batch_msg(b, msg->nlmsg_type, 0);
	if (!nlh)
		return -ENOBUFS;
	seq = nlh->nlmsg_seq;
	memcpy(nlh, msg, msg->nlmsg_len);
	nlh->nlmsg_seq = seq;
	nl_batch_commit(b, nlh, cookie);
	return 0;
}

/* The link was made but not marked: remove it again, keeping the first error text. */
static void unmake(const char *ifname)
{
	char why[512], more[512];

	snprintf(why, sizeof(why), "%s", wg_last_error());
	if (wg_genl_destroy(ifname) < 0) {
		snprintf(more, sizeof(more), "%s", wg_last_error());
		wg_set_last_error("%s; removing it again failed too: %s", why, more);
	} else {
		wg_set_last_error("%s (removed it again)", why);
	}
}

/* What the create's and the mark's ACKs say, as the return value and wg_last_error(). */
static int create_result(struct nl_sock *s, const char *ifname, const char *alias,
			 const struct ack acks[2], int ret, int sent)
{
	char err[NL_EXTACK_MAX + 64];

	if (ret < 0) {
		wg_set_last_error("%s: create failed: %s", ifname, strerror(-ret));
	} else if (acks[0].err == -EOPNOTSUPP) {
		/* "Unknown device type": no module for the kind, even after request_module */
		wg_set_last_error("%s: create failed: %s", ifname, WG_GENL_NO_KERNEL);
		ret = -EPROTONOSUPPORT;
	} else if (acks[0].err) {
		ret = acks[0].err;
		snprintf(s->extack, sizeof(s->extack), "%s", acks[0].extack);
		wg_set_last_error("%s: create failed: %s%s", ifname,
				  nl_strerror(s, ret, err, sizeof(err)),
				  ret == -EEXIST && !acks[1].err
				      ? " (the link appeared just now: check its alias)"
				      : "");
	} else if (acks[1].err) {
		ret = acks[1].err;
		snprintf(s->extack, sizeof(s->extack), "%s", acks[1].extack);
		wg_set_last_error("%s: created, but setting its alias \"%s\" failed: %s", ifname,
				  alias, nl_strerror(s, ret, err, sizeof(err)));
		unmake(ifname);
	} else if (sent < 0) {
		ret = sent;
		wg_set_last_error("%s: create failed: %s", ifname, strerror(-ret));
	}
	return ret;
}

int wg_genl_create(const char *ifname, const char *alias)
{
	char buf[NL_MSG_BUF], err[NL_EXTACK_MAX + 64];
	const struct nlmsghdr *create = (const struct nlmsghdr *)buf, *mark;
	struct ack acks[2] = {0}; /* create, mark */
	struct nl_sock *s;
	struct link_obs info;
	struct nl_batch *b;
	size_t len;
	int ret, sent, idx;

	len = wg_genl_encode_create(ifname, alias, 0, 0, buf, sizeof(buf));
	if (!wg_ifname_valid(ifname) || !len)
		return -EINVAL;
	mark = (const struct nlmsghdr *)(buf + NLMSG_ALIGN(create->nlmsg_len));
	/*
	 * The mark goes to the index the create asks for (netlink/ifindex.h):
	 * should someone take the name after the lookup below, the create fails
	 * and the mark finds no link, instead of marking theirs.
	 */
	idx = ifindex_fresh();
	if (!idx)
		return -EAGAIN;
	((struct ifinfomsg *)mnl_nlmsg_get_payload(create))->ifi_index = idx;
	((struct ifinfomsg *)mnl_nlmsg_get_payload(mark))->ifi_index = idx;
	s = route_socket(ifname);
	if (!s)
		return -errno;
	/*
	 * The kernel runs the second message even when the first fails, and
	 * would mark a link someone else made: never send it for a link that
	 * exists already.
	 */
	ret = link_lookup(s, ifname, &info);
	if (ret != -ENODEV) {
		if (!ret)
			wg_set_last_error(
			    "%s: create failed: a link of that name exists (kind \"%s\")", ifname,
			    info.kind);
		else
			wg_set_last_error("%s: lookup failed: %s", ifname,
					  nl_strerror(s, ret, err, sizeof(err)));
		ret = ret ? ret : -EEXIST;
		goto out;
	}
	/* both messages in one sendmsg: there is no moment for fabricd to die in between */
	b = nl_batch_new(s, ack_error, &acks[0]);
	if (b)
		nl_batch_reserve(b, 2, len);
	ret = b ? batch_put(b, create, &acks[0]) : -ENOMEM;
	if (!ret && batch_put(b, mark, &acks[1]) < 0)
		acks[1].err = -ENOBUFS; /* the link goes out alone, and is removed below */
	sent = nl_batch_finish(b);
	ret = create_result(s, ifname, alias, acks, ret, sent);
out:
	return ret;
}

int wg_genl_destroy(const char *ifname)
{
	char buf[NL_MSG_BUF], err[NL_EXTACK_MAX + 64];
	struct nl_sock *s;
	struct link_obs info;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int ret;

	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	s = route_socket(ifname);
	if (!s)
		return -errno;
	ret = link_lookup(s, ifname, &info);
	if (ret < 0) {
		if (ret == -ENODEV)
			wg_set_last_error("%s: no such device", ifname);
		else
			wg_set_last_error("%s: lookup failed: %s", ifname,
					  nl_strerror(s, ret, err, sizeof(err)));
		goto out;
	}
	/* never remove a link of another kind that happens to have our name */
	if (strcmp(info.kind, WG_GENL_NAME)) {
		ret = -EINVAL;
		wg_set_last_error("%s is not a WireGuard device (kind \"%s\"): not removing it",
				  ifname, info.kind);
		goto out;
	}
	nlh = nl_msg_start(s, buf, RTM_DELLINK, 0);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = info.ifindex;
	ret = nl_request(s, nlh, NULL, NULL);
	if (ret < 0 && ret != -ENODEV)
		wg_set_last_error("%s: delete failed: %s", ifname,
				  nl_strerror(s, ret, err, sizeof(err)));
out:
	return ret;
}

bool wg_genl_exists(const char *ifname)
{
	struct nl_sock *s = wg_ifname_valid(ifname) ? nl_route_shared() : NULL;
	struct link_obs info;

	return s && link_lookup(s, ifname, &info) == 0 && !strcmp(info.kind, WG_GENL_NAME);
}
