// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlrecord - records what fabricd reads from the kernel, for offline tests:
 * the raw rtnetlink dumps of links, bridge FDB and addresses, and the
 * WireGuard device as the userspace backend reports it (UAPI text).
 *
 *   nlrecord DIR      writes DIR/links.nl, DIR/fdb.nl, DIR/addrs.nl, DIR/wgfab0.uapi
 *
 * Each .nl file is the sequence of netlink messages exactly as received.
 */
#include <errno.h>
#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "netlink/nl.h"

static int record(struct nl_sock *s, uint16_t type, uint8_t family, size_t hdrlen, const char *path)
{
	char buf[NL_MSG_BUF * 4];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, type, 0);
	uint8_t *hdr = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	FILE *f = fopen(path, "wb");
	int done = 0;

	if (!f)
		return -errno;
	hdr[0] = family; /* every rtnetlink header starts with its family byte */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	if (mnl_socket_sendto(s->mnl, nlh, nlh->nlmsg_len) < 0)
		goto fail;
	while (!done) {
		ssize_t n = mnl_socket_recvfrom(s->mnl, buf, sizeof(buf));
		const struct nlmsghdr *r;
		int left;

		if (n < 0)
			goto fail;
		left = (int)n;
		for (r = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(r, left);
		     r = mnl_nlmsg_next(r, &left)) {
			if (r->nlmsg_type == NLMSG_DONE || r->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			fwrite(r, 1, r->nlmsg_len, f);
		}
	}
	return fclose(f) ? -errno : 0;
fail:
	fclose(f);
	return -errno;
}

static int record_uapi(const char *ifname, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char buf[65536];
	size_t used = 0;
	ssize_t n;
	FILE *f;
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "/var/run/wireguard/%s.sock", ifname);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    write(fd, "get=1\n\n", 7) != 7) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((n = read(fd, buf + used, sizeof(buf) - 1 - used)) > 0) {
		used += (size_t)n;
		buf[used] = '\0';
		if (strstr(buf, "\n\n"))
			break;
	}
	close(fd);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	/* the private key is not recorded: fixtures are committed */
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "private_key=", 12))
			continue;
		fprintf(f, "%s\n", line);
	}
	fprintf(f, "\n");
	return fclose(f) ? -errno : 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct nl_sock s;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: nlrecord DIR\n");
		return 1;
	}
	if (nl_open(&s, NETLINK_ROUTE) < 0) {
		perror("netlink");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/links.nl", argv[1]);
	ret = record(&s, RTM_GETLINK, AF_UNSPEC, sizeof(struct ifinfomsg), path);
	snprintf(path, sizeof(path), "%s/fdb.nl", argv[1]);
	if (!ret)
		ret = record(&s, RTM_GETNEIGH, AF_BRIDGE, sizeof(struct ndmsg), path);
	snprintf(path, sizeof(path), "%s/addrs.nl", argv[1]);
	if (!ret)
		ret = record(&s, RTM_GETADDR, AF_UNSPEC, sizeof(struct ifaddrmsg), path);
	nl_close(&s);
	snprintf(path, sizeof(path), "%s/wgfab0.uapi", argv[1]);
	if (!ret)
		ret = record_uapi("wgfab0", path);
	if (ret < 0) {
		fprintf(stderr, "nlrecord: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
