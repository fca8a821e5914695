// SPDX-License-Identifier: GPL-2.0-or-later
/* watch.c - the definition file, kernel notifications and the WireGuard digest. */
#include <errno.h>
#include <libgen.h>
#include <linux/neighbour.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/watch.h"
#include "base/log.h"
#include "kinds/fdb.h"

#define NL_RCVBUF (8 << 20) /* a burst of many thousand notifications fits */
#define INOTIFY_MASK                                                                               \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF |   \
	 IN_MOVE_SELF | IN_ONLYDIR)

void file_id_read(const char *path, struct file_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (stat(path, &st) < 0)
		return;
	id->exists = true;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	id->ctime = st.st_ctim;
}

bool file_id_changed(const struct file_id *a, const struct file_id *b)
{
	return a->exists != b->exists || a->dev != b->dev || a->ino != b->ino ||
	       a->size != b->size || a->mtime.tv_sec != b->mtime.tv_sec ||
	       a->mtime.tv_nsec != b->mtime.tv_nsec || a->ctime.tv_sec != b->ctime.tv_sec ||
	       a->ctime.tv_nsec != b->ctime.tv_nsec;
}

int file_watch_add(struct file_watch *w, const char *path)
{
	struct watched_file *f;
	char copy[sizeof(f->dir)], *dir;

	if (w->n == FILE_WATCH_MAX)
		return -E2BIG;
	f = &w->files[w->n++];
	f->wd = -1;
	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(f->base, sizeof(f->base), "%s", basename(copy));
	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (!realpath(dir, f->dir))
		snprintf(f->dir, sizeof(f->dir), "%s", dir);
	/* a second file in the same directory gets the same descriptor */
	f->wd = inotify_add_watch(w->fd, f->dir, INOTIFY_MASK | IN_MASK_ADD);
	if (f->wd < 0)
		log_warn("%s: cannot watch it (%s); changes of %s are noticed by a periodic "
			 "check instead",
			 f->dir, strerror(errno), f->base);
	return 0;
}

int file_watch_open(struct file_watch *w, const char *path)
{
	w->n = 0;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		return -errno;
	return file_watch_add(w, path);
}

void file_watch_retry(struct file_watch *w)
{
	for (size_t i = 0; i < w->n && w->fd >= 0; i++) {
		if (w->files[i].wd < 0)
			w->files[i].wd =
			    inotify_add_watch(w->fd, w->files[i].dir, INOTIFY_MASK | IN_MASK_ADD);
	}
}

/*
 * What the event says of a watched file: FILE_WRITTEN when it was closed
 * after writing or renamed into place (its content is whole), FILE_CREATED
 * when it was created (maybe still empty: its writer's close follows),
 * FILE_CHANGED for anything else (deleted, moved away, events lost). A
 * directory gone is forgotten (retried).
 */
static enum file_change file_event(struct file_watch *w, const struct inotify_event *ev)
{
	enum file_change what = FILE_UNCHANGED;

	if (ev->mask & IN_Q_OVERFLOW)
		return FILE_CHANGED;
	for (size_t i = 0; i < w->n; i++) {
		struct watched_file *f = &w->files[i];

		if (f->wd != ev->wd)
			continue;
		if (ev->mask & IN_IGNORED)
			f->wd = -1; /* the directory went away: file_watch_retry() */
		else if (ev->len && !strcmp(ev->name, f->base))
			what = (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) ? FILE_WRITTEN
			       : (ev->mask & IN_CREATE)			   ? FILE_CREATED
									   : FILE_CHANGED;
	}
	return what;
}

enum file_change file_watch_read(struct file_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	enum file_change changed = FILE_UNCHANGED, what;
	bool lost = false;
	ssize_t n;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			what = file_event(w, ev);
			lost = lost || (ev->mask & IN_Q_OVERFLOW);
			if (what != FILE_UNCHANGED)
				changed = what; /* the last event says whether a writer is done */
		}
	}
	return lost ? FILE_CHANGED : changed;
}

void file_watch_close(struct file_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->n = 0;
}

struct mnl_socket *kernel_watch_open(void)
{
	struct mnl_socket *mon = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int size = NL_RCVBUF, fd;

	if (!mon)
		return NULL;
	fd = mnl_socket_get_fd(mon);
	/* FORCE passes rmem_max (fabricd runs as root); the plain option is the fallback */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (mnl_socket_bind(mon,
			    RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
				RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
			    MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(mon);
		return NULL;
	}
	return mon;
}

struct mnl_socket *nft_watch_open(void)
{
	struct mnl_socket *mon = mnl_socket_open2(NETLINK_NETFILTER, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int size = NL_RCVBUF / 4, group = NFNLGRP_NFTABLES;

	if (!mon)
		return NULL;
	setsockopt(mnl_socket_get_fd(mon), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (mnl_socket_bind(mon, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(mon, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		mnl_socket_close(mon);
		return NULL;
	}
	return mon;
}

/*
 * A change of the table `inet fabricd`: tables, chains, rules, sets and set
 * elements all carry their table's name as attribute 1 (NFTA_TABLE_NAME,
 * NFTA_CHAIN_TABLE, ...). Other tables belong to other tools.
 */
static bool is_fabricd_table(const struct nlmsghdr *nlh)
{
	const struct nfgenmsg *nfg;
	const struct nlattr *attr;

	if ((nlh->nlmsg_type >> 8) != NFNL_SUBSYS_NFTABLES ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*nfg)))
		return false;
	nfg = mnl_nlmsg_get_payload(nlh);
	if (nfg->nfgen_family != NFPROTO_INET)
		return false;
	mnl_attr_for_each(attr, nlh, sizeof(*nfg))
	{
		if (mnl_attr_get_type(attr) == NFTA_TABLE_NAME &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			return !strcmp(mnl_attr_get_str(attr), "fabricd");
	}
	return false;
}

/* For --verbose: the kind of a notification and, for links, the name. */
static void describe(const struct nlmsghdr *nlh)
{
	static const char *const names[] = {
	    [RTM_NEWLINK] = "link changed",	 [RTM_DELLINK] = "link removed",
	    [RTM_NEWADDR] = "address added",	 [RTM_DELADDR] = "address removed",
	    [RTM_NEWROUTE] = "route added",	 [RTM_DELROUTE] = "route removed",
	    [RTM_NEWNEIGH] = "fdb remote added", [RTM_DELNEIGH] = "fdb remote removed",
	};
	const struct nlattr *attr;
	const char *ifname = "";

	if (!log_is_verbose())
		return;
	if ((nlh->nlmsg_type == RTM_NEWLINK || nlh->nlmsg_type == RTM_DELLINK) &&
	    nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct ifinfomsg))) {
		mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg))
		{
			if (mnl_attr_get_type(attr) == IFLA_IFNAME &&
			    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				ifname = mnl_attr_get_str(attr);
		}
	}
	log_debug("kernel: %s%s%s", names[nlh->nlmsg_type], ifname[0] ? " " : "", ifname);
}

/*
 * The next batch of pending notifications into buf: its length, 0 when none
 * is left (or on an error other than ENOBUFS, which sets *lost and reads on).
 */
static int next_batch(struct mnl_socket *mon, char *buf, size_t len, bool *lost)
{
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(mon), buf, len, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			*lost = true;
			continue;
		}
		return n > 0 ? (int)n : 0;
	}
}

/* A MAC entry with a remote that FRR's zebra (or another agent) put on a VXLAN device. */
static bool extern_remote(const struct nlmsghdr *nlh)
{
	const struct ndmsg *ndm;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return false;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE || !(ndm->ndm_flags & NTF_EXT_LEARNED) ||
	    !(ndm->ndm_flags & NTF_SELF))
		return false;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		if (mnl_attr_get_type(attr) == NDA_DST)
			return true;
	}
	return false;
}

/* One rtnetlink notification: marks the view; KERNEL_* for what it means to fabricd. */
static unsigned int kernel_notified(const struct nlmsghdr *nlh, struct obs_view *view)
{
	int ifindex;

	/* a bridge port's notification that says what the view has: nothing to do */
	if (view_port_unchanged(view, nlh))
		return KERNEL_QUIET;
	view_notify(view, nlh);
	switch (nlh->nlmsg_type) {
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		if (!fdb_msg_is_remote(nlh, &ifindex))
			/* learned MACs and ARP: guest traffic; zebra's: its remotes moved */
			return extern_remote(nlh) ? KERNEL_REMOTE_MOVED : KERNEL_QUIET;
		/* fall through */
	case RTM_NEWLINK:
	case RTM_DELLINK:
	case RTM_NEWADDR:
	case RTM_DELADDR:
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		describe(nlh);
		return KERNEL_CHANGED;
	}
	return KERNEL_QUIET;
}

unsigned int kernel_watch_read(struct mnl_socket *mon, struct obs_view *view)
{
	char buf[32768] __attribute__((aligned(4)));
	unsigned int events = KERNEL_QUIET;
	bool lost = false;
	int left;

	while ((left = next_batch(mon, buf, sizeof(buf), &lost)) > 0) {
		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		     mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			events |= kernel_notified(nlh, view);
		}
	}
	if (lost) {
		events |= KERNEL_OVERFLOW;
		view_invalidate(view); /* some were lost: read everything again */
	}
	return events;
}

unsigned int nft_watch_read(struct mnl_socket *mon, struct obs_view *view)
{
	char buf[32768] __attribute__((aligned(4)));
	unsigned long changes = 0;
	bool lost = false;
	int left;

	while ((left = next_batch(mon, buf, sizeof(buf), &lost)) > 0) {
		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		     mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
			changes += is_fabricd_table(nlh);
	}
	if (!changes && !lost)
		return KERNEL_QUIET;
	/*
	 * Lost ones can only have been about tables: the guard is read again,
	 * nothing else. One line, not one per element: loading a whole table
	 * notifies each of them.
	 */
	log_debug("kernel: firewall table inet fabricd changed (%lu notifications%s)", changes,
		  lost ? ", more lost" : "");
	view_guard_changed(view);
	return KERNEL_CHANGED;
}

uint64_t digest(uint64_t h, const void *data, size_t len)
{
	return fnv1a(h, data, len);
}

/* Field by field: structs have padding, and IPv4 leaves bytes[4..15] unspecified. */
static uint64_t digest_addr(uint64_t h, const struct ip_addr *a)
{
	h = digest(h, &a->family, sizeof(a->family));
	return digest(h, a->bytes, ip_addr_len(a));
}

uint64_t wg_signature(const struct wg_device *dev)
{
	uint64_t h = DIGEST_INIT, peers = 0;

	h = digest(h, &dev->listen_port, sizeof(dev->listen_port));
	h = digest(h, dev->public_key, sizeof(dev->public_key));
	h = digest(h, &dev->n_peers, sizeof(dev->n_peers));
	for (size_t i = 0; i < dev->n_peers; i++) {
		const struct wg_peer *p = &dev->peers[i];
		uint64_t ph = digest(DIGEST_INIT, p->public_key, sizeof(p->public_key)), ips = 0;
		struct ip_addr a;
		uint16_t port = 0;

		ph = digest(ph, &p->keepalive, sizeof(p->keepalive));
		ph = digest(ph, p->preshared_key, sizeof(p->preshared_key));
		/* only whether it has one: a roamed endpoint is WireGuard working, not drift */
		if (p->endpoint.ss_family &&
		    ip_addr_from_sockaddr((const struct sockaddr *)&p->endpoint, &a, &port) == 0)
			ph = digest(ph, "endpoint", 8);
		/* a sum: the order in which the backend lists them does not matter */
		for (size_t j = 0; j < p->n_allowed_ips; j++)
			ips += digest(digest_addr(DIGEST_INIT, &p->allowed_ips[j].addr),
				      &p->allowed_ips[j].len, sizeof(p->allowed_ips[j].len));
		peers += digest(ph, &ips, sizeof(ips));
	}
	return digest(h, &peers, sizeof(peers));
}
