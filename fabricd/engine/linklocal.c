// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/linklocal.c - the IPv6 link-local addresses the kernel gave
 * fabricd's links anyway.
 *
 * fabricd's bridges and VXLAN devices have no IPv6 address (addrgenmode
 * none): a vnet's own bridge must not send router solicitations and MLD
 * reports into its tenant's network. Under 1280 bytes the kernel drops a
 * link's IPv6 state; when the MTU comes back it makes it anew with the
 * default mode, eui64, and a link-local address at once. fabricd sets the
 * mode back (the link change), which leaves that address: it is deleted here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/linklocal.h"
#include "kinds/ifaddr.h"
#include "kinds/link.h"

#define MAX_FOUND 8 /* a link has one; more are someone's, and go all the same */

struct found {
	int ifindex;
	size_t n;
	struct ip_prefix addr[MAX_FOUND];
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct found *f = data;
	struct ifaddr_entry e;

	/* that link's only: a kernel that ignores the dump's filter sends every link's */
	if (ifaddr_parse(nlh, &e) == 0 && e.ifindex == f->ifindex &&
	    ip_addr_is_link_local(&e.prefix.addr) && f->n < MAX_FOUND)
		f->addr[f->n++] = e.prefix;
	return MNL_CB_OK;
}

static void found_reset(void *data)
{
	((struct found *)data)->n = 0;
}

static void forget_one(struct nl_sock *s, const struct op *op)
{
	char buf[NL_MSG_BUF], text[IP_ADDR_STRLEN];
	struct found f = {.ifindex = op->ifindex};
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETADDR, 0);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	int ret;

	ifa->ifa_family = AF_INET6;
	ifa->ifa_index = (unsigned int)op->ifindex;
	if (nl_dump(s, nlh, addr_cb, found_reset, &f) < 0)
		return; /* the link went: nothing of it is left either */
	for (size_t i = 0; i < f.n; i++) {
		nlh = nl_msg_start(s, buf, RTM_DELADDR, 0);
		ifaddr_put(nlh, op->ifindex, &f.addr[i]);
		ret = nl_request(s, nlh, NULL, NULL);
		if (ret < 0 && ret != -EADDRNOTAVAIL && ret != -ENODEV)
			log_warn("%s: cannot delete its IPv6 link-local address %s: %s", op->ifname,
				 ip_addr_str(&f.addr[i].addr, text, sizeof(text)), strerror(-ret));
	}
}

void linklocal_forget(struct nl_sock *s, const struct plan *p, int phase)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if ((int)op->phase == phase && op->type == OP_LINK_CHANGE && !op->failed &&
		    op->ifindex && (op->u.link.mask & LINK_SET_NO_ADDRGEN))
			forget_one(s, op);
	}
}

/* '1' when IPv6 is off on the link of path, '0' when on, 0 when unknown (no such file). */
static char read_flag(const char *path)
{
	char v = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	return v;
}

void linklocal_ipv6_on(const struct op *op)
{
	char path[96];
	int ret;

	if (op->type != OP_ADDR_ADD || op->u.prefix.addr.family != AF_INET6)
		return;
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", op->ifname);
	if (read_flag(path) != '1')
		return; /* on, or no IPv6 at all (ipv6.disable=1): the add says so */
	ret = write_proc(path, "0\n");
	if (ret < 0)
		log_warn("%s: IPv6 is off on it (net.ipv6.conf.%s.disable_ipv6 = 1) and cannot be "
			 "turned on for its address: %s; set it to 0 (sysctl -w "
			 "net.ipv6.conf.%s.disable_ipv6=0)",
			 op->ifname, op->ifname, strerror(-ret), op->ifname);
	else
		log_info("%s: IPv6 was off on it (net.ipv6.conf.%s.disable_ipv6 = 1): turned on "
			 "for its address",
			 op->ifname, op->ifname);
}
