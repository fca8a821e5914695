// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon.c - `fabricd run`: converge, then wait on events, not timers.
 *
 * One epoll loop over four descriptors:
 *   inotify   the definition's directory, filtered by file name: editors and
 *             cluster file systems replace the file by rename, which a watch
 *             on the file itself would not follow;
 *   netlink   notifications for links, addresses, routes and the all-zeros
 *             FDB entries fabricd owns; an overflow (ENOBUFS) means some were
 *             lost, so the next pass re-reads everything (every pass does);
 *   signalfd  SIGHUP reloads, SIGTERM and SIGINT end the daemon and leave the
 *             dataplane up;
 *   timerfd   one timer for the next due of: the debounce that coalesces a
 *             burst of events into one pass, the next retire step of a VXLAN
 *             device a vnet has left, and the periodic check.
 *
 * The periodic check (every 500 ms) is the one deliberate timer. Neither
 * kernel WireGuard nor wireguard-go notifies anyone when a peer changes, so
 * the peers are read again (cheap: one UAPI or genetlink get) and compared
 * with what the last converged pass saw; a `wg set wgfab0 peer X remove` is
 * repaired within a second. The same tick stats the definition file, for file
 * systems that do not support inotify (FUSE, such as Proxmox's /etc/pve).
 *
 * A pass is always a full one (session.h): observe the kernel, diff, plan,
 * apply. The notifications caused by its own changes lead to one more pass,
 * which plans nothing and logs nothing; then the loop sleeps.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "daemon.h"
#include "daemon_report.h"
#include "log.h"
#include "notify.h"
#include "retire.h"
#include "session.h"

#define DEBOUNCE_MS  30
#define CHECK_MS     500
#define RETRY_MIN_MS 250
#define RETRY_MAX_MS 30000
#define NL_RCVBUF    (8 << 20) /* a burst of a few thousand notifications fits */
#define INOTIFY_MASK                                                                               \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF |   \
	 IN_MOVE_SELF | IN_ONLYDIR)

enum { EV_SIGNAL, EV_INOTIFY, EV_NETLINK, EV_TIMER };

/* What the definition file was when it was last read: a change means read it again. */
struct file_id {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct zone_mtu {
	char name[FABRICD_NAME_MAX + 1];
	unsigned int mtu;
};

struct daemon {
	const struct options *o;
	struct notify notify;
	int ep, ino, wd, sig, timer;
	struct mnl_socket *mon;
	char dir[PATH_MAX], base[NAME_MAX + 1];
	struct cluster *cluster; /* the last good definition */
	char node[FABRICD_NAME_MAX + 1];
	struct file_id file;
	uint64_t rejected;   /* the problems last reported, so that each is logged once */
	bool def_invalid;    /* the file on disk is not the definition in force */
	bool reload, forced; /* read the file in the next pass; forced: SIGHUP */
	bool reloading;	     /* RELOADING=1 was sent; READY=1 follows the pass */
	bool stop;
	unsigned int reasons; /* of the next pass */
	long long pass_at, check_at, wake_at; /* CLOCK_MONOTONIC ms, 0 = not due */
	unsigned int failures;		      /* passes failed in a row */
	enum wg_backend backend;
	bool wg_known; /* wg_sig holds the WireGuard state of the last converged pass */
	uint64_t wg_sig;
	size_t n_mtus;
	struct zone_mtu *mtus;
	char status[256];
};

static long long clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static long long now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* Runs a pass delay_ms from now at the latest, for reasons. */
static void schedule(struct daemon *d, unsigned int reasons, long long delay_ms)
{
	long long at = now_ms() + delay_ms;

	d->reasons |= reasons;
	if (!d->pass_at || at < d->pass_at)
		d->pass_at = at;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#define FNV_INIT 0xcbf29ce484222325ULL

/* What the periodic check compares: keys, port, and each peer's settings (order-free). */
static uint64_t wg_signature(const struct wg_device *dev)
{
	uint64_t h = FNV_INIT, peers = 0;

	h = fnv(h, &dev->listen_port, sizeof(dev->listen_port));
	h = fnv(h, dev->public_key, sizeof(dev->public_key));
	h = fnv(h, &dev->n_peers, sizeof(dev->n_peers));
	for (size_t i = 0; i < dev->n_peers; i++) {
		const struct wg_peer *p = &dev->peers[i];
		uint64_t ph = fnv(FNV_INIT, p->public_key, sizeof(p->public_key)), ips = 0;
		struct ip_addr a;
		uint16_t port = 0;

		ph = fnv(ph, &p->keepalive, sizeof(p->keepalive));
		ph = fnv(ph, p->preshared_key, sizeof(p->preshared_key));
		if (p->endpoint.ss_family &&
		    ip_addr_from_sockaddr((const struct sockaddr *)&p->endpoint, &a, &port) == 0) {
			ph = fnv(ph, &a, sizeof(a));
			ph = fnv(ph, &port, sizeof(port));
		}
		for (size_t j = 0; j < p->n_allowed_ips; j++)
			ips += fnv(FNV_INIT, &p->allowed_ips[j], sizeof(p->allowed_ips[j]));
		peers += fnv(ph, &ips, sizeof(ips));
	}
	return fnv(h, &peers, sizeof(peers));
}

static void file_stat(const char *path, struct file_id *id)
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

static bool file_changed(const struct file_id *a, const struct file_id *b)
{
	return a->exists != b->exists || a->dev != b->dev || a->ino != b->ino ||
	       a->size != b->size || a->mtime.tv_sec != b->mtime.tv_sec ||
	       a->mtime.tv_nsec != b->mtime.tv_nsec || a->ctime.tv_sec != b->ctime.tv_sec ||
	       a->ctime.tv_nsec != b->ctime.tv_nsec;
}

static void set_status(struct daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_status(struct daemon *d, const char *fmt, ...)
{
	char status[sizeof(d->status)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(status, sizeof(status), fmt, ap);
	va_end(ap);
	if (!strcmp(status, d->status))
		return;
	snprintf(d->status, sizeof(d->status), "%s", status);
	notify_send(&d->notify, "STATUS=%s", status);
}

/*
 * Reads the definition file for the next pass. Returns a new definition, or
 * NULL when there is none to use; its problems are then logged, each set of
 * them once (an editor saving the same broken file twice logs it once).
 */
static struct cluster *load_candidate(struct daemon *d, bool forced)
{
	const char *path = d->o->config;
	struct cluster *c = NULL;
	struct diag diag;
	uint64_t h;
	int ret;

	file_stat(path, &d->file); /* before reading: a change during the read shows next time */
	diag_init(&diag);
	ret = config_load_file(path, &c, &diag);
	if (ret == 0 && cluster_find_node(c, d->node) < 0) {
		diag_add(&diag, "nodes",
			 "this node, %s, is no longer in the definition; to take it out of the "
			 "fabric, stop fabricd and run `fabricd down` with the last good definition",
			 d->node);
		ret = -EINVAL;
	} else if (ret == 0 && strcmp(c->name, d->cluster->name)) {
		diag_add(&diag, "cluster",
			 "the cluster name changed from \"%s\" to \"%s\", which would disown every "
			 "object fabricd made here; run `fabricd down` with the old definition "
			 "first, then start fabricd again",
			 d->cluster->name, c->name);
		ret = -EINVAL;
	}
	if (ret < 0) {
		h = fnv(FNV_INIT, &ret, sizeof(ret));
		for (size_t i = 0; i < diag.n; i++)
			h = fnv(h, diag.msgs[i], strlen(diag.msgs[i]));
		if (forced || h != d->rejected) {
			if (diag.n)
				log_error("%s: not used, the last good definition stays in force; "
					  "fix these problems and save it again:",
					  path);
			else
				log_error("%s: cannot read it: %s; the last good definition stays "
					  "in force",
					  path, strerror(-ret));
			diag_print(&diag, stderr);
		}
		d->rejected = h;
		d->def_invalid = true;
		cluster_free(c);
		c = NULL;
	} else if (diag.n_warnings) {
		diag_print(&diag, stderr);
	}
	diag_free(&diag);
	return c;
}

/* Warns when a zone's MTU changes: guests do not learn it by themselves. */
static void report_mtus(struct daemon *d, const struct session *s, unsigned int reasons)
{
	const struct node_state *w = &s->want;
	struct zone_mtu *mtus;

	if (!w->mtu_known)
		return;
	mtus = calloc(w->n_zones ? w->n_zones : 1, sizeof(*mtus));
	if (!mtus)
		return;
	for (size_t i = 0; i < w->n_zones; i++) {
		const struct zone *z = &s->cluster->zones[w->zones[i].zone];
		unsigned int mtu = w->zones[i].mtu;
		const char *why = (reasons & REASON_DEFINITION) ? "definition changed"
								 : "underlay MTU changed";

		snprintf(mtus[i].name, sizeof(mtus[i].name), "%s", z->name);
		mtus[i].mtu = mtu;
		for (size_t j = 0; j < d->n_mtus; j++) {
			unsigned int old = d->mtus[j].mtu;

			if (strcmp(d->mtus[j].name, z->name) || old == mtu)
				continue;
			if (mtu < old)
				log_warn("zone %s: MTU %u -> %u (%s; transport %s, mtu_policy %s): "
					 "guests must lower their MTU to %u or lose large packets",
					 z->name, old, mtu, why, transport_name(z->transport),
					 mtu_policy_name(z->mtu_policy), mtu);
			else
				log_info("zone %s: MTU %u -> %u (%s; transport %s, mtu_policy %s): "
					 "guests may raise their MTU to %u",
					 z->name, old, mtu, why, transport_name(z->transport),
					 mtu_policy_name(z->mtu_policy), mtu);
		}
	}
	free(d->mtus);
	d->mtus = mtus;
	d->n_mtus = w->n_zones;
}

static void pass_failed(struct daemon *d, unsigned int reasons)
{
	unsigned int shift = d->failures < 7 ? d->failures : 7;
	long long delay = (long long)RETRY_MIN_MS << shift;

	if (delay > RETRY_MAX_MS)
		delay = RETRY_MAX_MS;
	d->failures++;
	log_error("%s: not converged; trying again in %.1f s", d->node, delay / 1000.0);
	schedule(d, reasons | REASON_RETRY, delay);
	set_status(d, "not converged, retrying (see the log)");
}

/* Epoch seconds -> CLOCK_MONOTONIC ms, a little after, so that time(NULL) has reached it. */
static long long wake_from_epoch(long long epoch)
{
	long long delay = epoch * 1000 - clock_ms(CLOCK_REALTIME) + 20;

	return now_ms() + (delay < 20 ? 20 : delay);
}

static void converged_status(struct daemon *d, const struct session *s)
{
	set_status(d, "%s%s: %zu zones, %zu vnets, %zu peers, converged",
		   d->def_invalid ? "definition not valid, last good one in force; " : "",
		   d->node, s->want.n_zones, s->want.n_vnets, s->want.fabric.n_peers);
}

/* One pass. 0 when converged (or changes applied), -1 when it failed (retry scheduled). */
static int run_pass(struct daemon *d)
{
	unsigned int reasons = d->reasons;
	struct cluster *cand = NULL;
	bool forced = d->forced;
	long long wake = 0;
	struct session s;
	int ret;

	d->reasons = 0;
	if (d->reload) {
		d->reload = d->forced = false;
		cand = load_candidate(d, forced);
	}
	if (session_open_cluster(&s, d->o, cand ? cand : d->cluster) < 0 ||
	    session_load_keys(&s, d->o, true) < 0 || session_plan(&s) < 0) {
		session_free(&s);
		if (!cand) {
			pass_failed(d, reasons);
			return -1;
		}
		log_error("%s: cannot be applied on this node (see above); the last good "
			  "definition stays in force",
			  d->o->config);
		d->def_invalid = true;
		cluster_free(cand);
		if (reasons)
			schedule(d, reasons, 0);
		return 0;
	}
	if (cand) {
		if (report_definition(d->cluster, cand))
			reasons |= REASON_DEFINITION;
		else if (forced)
			log_info("%s: reloaded, no change", d->o->config);
		cluster_free(d->cluster);
		d->cluster = cand; /* the session borrowed it: it stays valid */
		d->def_invalid = false;
		d->rejected = 0;
	}
	report_mtus(d, &s, reasons);
	if (s.plan.n) {
		report_plan(&s.plan, reasons);
		ret = plan_apply(&s.r, &s.plan);
		if (ret < 0) {
			session_free(&s);
			pass_failed(d, reasons);
			return -1;
		}
		report_applied(&s.plan, d->node, reasons);
		/* read back what was applied: the next, empty pass records it */
		schedule(d, REASON_SETTLE, DEBOUNCE_MS);
		d->wg_known = false;
	} else {
		d->backend = s.r.backend;
		d->wg_known = s.have.wg != NULL;
		if (s.have.wg)
			d->wg_sig = wg_signature(s.have.wg);
		if (reasons & REASON_STARTUP)
			log_info("%s: up to date, nothing to change (the running fabric is adopted)",
				 d->node);
	}
	ret = retire_ports(&s.r, &s.have, d->o->grace, &wake);
	if (ret > 0)
		schedule(d, REASON_SETTLE, DEBOUNCE_MS);
	d->wake_at = wake ? wake_from_epoch(wake) : 0;
	converged_status(d, &s);
	session_free(&s);
	if (ret < 0) {
		pass_failed(d, reasons);
		return -1;
	}
	d->failures = 0;
	return 0;
}

static void watch_dir(struct daemon *d)
{
	d->wd = inotify_add_watch(d->ino, d->dir, INOTIFY_MASK);
	if (d->wd < 0)
		log_warn("%s: cannot watch it (%s); changes of %s are noticed within %d ms "
			 "instead",
			 d->dir, strerror(errno), d->base, CHECK_MS);
}

static void handle_inotify(struct daemon *d)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(d->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_IGNORED) {
				d->wd = -1; /* the directory went away: the periodic check re-adds it */
			} else if ((ev->mask & IN_Q_OVERFLOW) || (ev->len && !strcmp(ev->name, d->base))) {
				log_debug("%s: changed on disk", d->o->config);
				d->reload = true;
				schedule(d, 0, DEBOUNCE_MS);
			}
		}
	}
}

/* An all-zeros FDB entry with a remote: the only neighbour entries fabricd makes. */
static bool is_fdb_remote(const struct nlmsghdr *nlh)
{
	static const uint8_t zero[6];
	const struct nlattr *attr;
	const struct ndmsg *ndm;
	bool mac = false, dst = false;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return false;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE)
		return false;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		uint16_t len = mnl_attr_get_payload_len(attr);

		if (mnl_attr_get_type(attr) == NDA_LLADDR)
			mac = len == 6 && !memcmp(mnl_attr_get_payload(attr), zero, 6);
		else if (mnl_attr_get_type(attr) == NDA_DST)
			dst = true;
	}
	return mac && dst;
}

static const char *event_name(uint16_t type)
{
	switch (type) {
	case RTM_NEWLINK:
		return "link changed";
	case RTM_DELLINK:
		return "link removed";
	case RTM_NEWADDR:
		return "address added";
	case RTM_DELADDR:
		return "address removed";
	case RTM_NEWROUTE:
		return "route added";
	case RTM_DELROUTE:
		return "route removed";
	case RTM_NEWNEIGH:
		return "fdb remote added";
	case RTM_DELNEIGH:
		return "fdb remote removed";
	}
	return NULL;
}

static void handle_netlink(struct daemon *d)
{
	char buf[32768] __attribute__((aligned(4)));
	int fd = mnl_socket_get_fd(d->mon);
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			log_info("kernel notifications overflowed (ENOBUFS): reading everything again");
			schedule(d, REASON_KERNEL, 0);
			continue;
		}
		if (n <= 0)
			break;
		int left = (int)n;

		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		     mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			const char *what = event_name(nlh->nlmsg_type);

			if (!what || ((nlh->nlmsg_type == RTM_NEWNEIGH ||
				       nlh->nlmsg_type == RTM_DELNEIGH) &&
				      !is_fdb_remote(nlh)))
				continue;
			log_debug("kernel: %s", what);
			schedule(d, REASON_KERNEL, DEBOUNCE_MS);
		}
	}
}

static void handle_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info("%s: reloading %s (SIGHUP)", d->node, d->o->config);
			notify_send(&d->notify, "RELOADING=1\nMONOTONIC_USEC=%lld",
				    clock_ms(CLOCK_MONOTONIC) * 1000);
			d->reload = d->forced = d->reloading = true;
			schedule(d, 0, 0);
		} else {
			log_info("%s: stopping on %s; the fabric stays up", d->node,
				 si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
			d->stop = true;
		}
	}
}

/* The periodic check; see the file comment. */
static void check(struct daemon *d)
{
	struct wg_device *dev = NULL;
	struct file_id id;

	d->check_at = now_ms() + CHECK_MS;
	if (d->wd < 0)
		watch_dir(d);
	file_stat(d->o->config, &id);
	if (file_changed(&id, &d->file)) {
		log_debug("%s: changed on disk (periodic check)", d->o->config);
		d->file = id;
		d->reload = true;
		schedule(d, 0, 0);
	}
	if (!d->wg_known || d->pass_at)
		return;
	if (wg_get(d->backend, FABRIC_IFNAME, &dev) < 0 || wg_signature(dev) != d->wg_sig) {
		log_debug("fabric %s: WireGuard settings differ from the last pass", FABRIC_IFNAME);
		d->wg_known = false;
		schedule(d, REASON_PEERS, 0);
	}
	wg_device_free(dev);
}

static void arm_timer(struct daemon *d)
{
	long long next = d->check_at, now = now_ms();
	struct itimerspec its = {0};

	if (d->pass_at && d->pass_at < next)
		next = d->pass_at;
	if (d->wake_at && d->wake_at < next)
		next = d->wake_at;
	if (next <= now)
		next = now + 1; /* a zero it_value would disarm it */
	its.it_value.tv_sec = next / 1000;
	its.it_value.tv_nsec = (next % 1000) * 1000000;
	timerfd_settime(d->timer, TFD_TIMER_ABSTIME, &its, NULL);
}

static int add_fd(struct daemon *d, int fd, uint32_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

	return epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev);
}

static int open_netlink(struct daemon *d)
{
	int size = NL_RCVBUF, fd;

	d->mon = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!d->mon)
		return -1;
	fd = mnl_socket_get_fd(d->mon);
	/* FORCE passes rmem_max (fabricd runs as root); the plain option is the fallback */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (mnl_socket_bind(d->mon,
			    RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
				RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
			    MNL_SOCKET_AUTOPID) < 0)
		return -1;
	return add_fd(d, fd, EV_NETLINK);
}

static int open_all(struct daemon *d)
{
	char copy[PATH_MAX], *dir;
	sigset_t mask;

	snprintf(copy, sizeof(copy), "%s", d->o->config);
	snprintf(d->base, sizeof(d->base), "%s", basename(copy));
	snprintf(copy, sizeof(copy), "%s", d->o->config);
	dir = dirname(copy);
	if (!realpath(dir, d->dir))
		snprintf(d->dir, sizeof(d->dir), "%s", dir);

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	/* wireguard-go's start resets every disposition and the mask in the child */
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	d->sig = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	d->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->ep < 0 || d->sig < 0 || d->ino < 0 || d->timer < 0 || add_fd(d, d->sig, EV_SIGNAL) ||
	    add_fd(d, d->ino, EV_INOTIFY) || add_fd(d, d->timer, EV_TIMER) || open_netlink(d) < 0)
		return -1;
	watch_dir(d);
	return 0;
}

static void close_all(struct daemon *d)
{
	int fds[] = {d->ep, d->sig, d->ino, d->timer};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	if (d->mon)
		mnl_socket_close(d->mon);
	notify_close(&d->notify);
	cluster_free(d->cluster);
	free(d->mtus);
}

static void dispatch(struct daemon *d, const struct epoll_event *ev)
{
	uint64_t ticks;

	switch (ev->data.u32) {
	case EV_SIGNAL:
		handle_signal(d);
		break;
	case EV_INOTIFY:
		handle_inotify(d);
		break;
	case EV_NETLINK:
		handle_netlink(d);
		break;
	case EV_TIMER:
		if (read(d->timer, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
			log_debug("timer: %s", strerror(errno));
		break;
	}
}

/* Startup: the definition must be valid and name this node; the first pass must converge. */
static int start(struct daemon *d)
{
	size_t self;

	if (cli_load_cluster(d->o, &d->cluster) < 0 || cli_find_self(d->o, d->cluster, &self) < 0)
		return -1;
	file_stat(d->o->config, &d->file);
	snprintf(d->node, sizeof(d->node), "%s", d->cluster->nodes[self].name);
	log_info("%s: fabricd run: definition %s, grace %u s", d->node, d->o->config,
		 d->o->grace);
	d->reasons = REASON_STARTUP;
	if (run_pass(d) < 0) {
		log_error("%s: the first convergence failed; fix the errors above and start "
			  "fabricd again",
			  d->node);
		return -1;
	}
	notify_send(&d->notify, "READY=1\nSTATUS=%s", d->status);
	return 0;
}

int daemon_run(const struct options *o)
{
	struct daemon d = {.o = o, .ep = -1, .ino = -1, .wd = -1, .sig = -1, .timer = -1};
	int ret = 0;

	notify_open(&d.notify);
	if (open_all(&d) < 0) {
		log_error("run: cannot set up the event loop: %s", strerror(errno));
		close_all(&d);
		return 1;
	}
	if (start(&d) < 0) {
		close_all(&d);
		return 1;
	}
	d.check_at = now_ms() + CHECK_MS;
	while (!d.stop) {
		struct epoll_event evs[8];
		long long now;
		int n;

		arm_timer(&d);
		n = epoll_wait(d.ep, evs, 8, -1);
		if (n < 0 && errno != EINTR) {
			log_error("run: epoll_wait: %s", strerror(errno));
			ret = 1;
			break;
		}
		for (int i = 0; i < n; i++)
			dispatch(&d, &evs[i]);
		if (d.stop)
			break;
		now = now_ms();
		if (now >= d.check_at)
			check(&d);
		if (d.wake_at && now >= d.wake_at) {
			d.wake_at = 0;
			schedule(&d, REASON_RETIRE, 0);
		}
		if (d.pass_at && now_ms() >= d.pass_at) {
			d.pass_at = 0;
			run_pass(&d);
			if (d.reloading) {
				d.reloading = false;
				notify_send(&d.notify, "READY=1\nSTATUS=%s", d.status);
			}
		}
	}
	notify_send(&d.notify, "STOPPING=1");
	close_all(&d);
	return ret;
}
