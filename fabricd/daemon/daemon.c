// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/daemon.c - `fabricd run`: converge, then wait on events, not timers.
 *
 * One epoll loop over these descriptors:
 *   inotify   the definition's directory, filtered by file name: editors and
 *             cluster file systems replace the file by rename, which a watch
 *             on the file itself would not follow;
 *   netlink   notifications for links, addresses, routes and the all-zeros
 *             FDB entries fabricd owns, and (netfilter) for its nftables
 *             table; each marks what it names dirty in the kept view, and an
 *             overflow (ENOBUFS) means some were lost, so the next pass
 *             re-reads everything;
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
 * A pass observes from the view it keeps (engine/view.h), diffs, plans and
 * applies; the notifications its own changes cause lead to one more pass,
 * which plans and logs nothing; then the loop sleeps.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "engine/frr.h"
#include "engine/route_cache.h"
#include "engine/session.h"
#include "definition/config.h"
#include "daemon/daemon.h"
#include "daemon/daemon_priv.h"
#include "base/log.h"
#include "engine/resolve.h"

long long daemon_clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

long long daemon_now_ms(void)
{
	return daemon_clock_ms(CLOCK_MONOTONIC);
}

void daemon_schedule(struct daemon *d, unsigned int reasons, long long delay_ms)
{
	long long at = daemon_now_ms() + delay_ms;

	d->reasons |= reasons;
	if (!d->pass_at || at < d->pass_at)
		d->pass_at = at;
}

void daemon_set_status(struct daemon *d, const char *fmt, ...)
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
 * An inotify event of a definition file. One written whole is read at once;
 * one made anew (an editor's save: the old file moved aside), maybe still
 * empty, at its writer's close, or once the periodic check finds it the
 * same (a SIGHUP reads it all the same); anything else may have more coming.
 * in_pass: the pass that reads it runs now.
 */
void daemon_file_changed(struct daemon *d, enum file_change change, bool in_pass)
{
	if (change == FILE_CREATED) {
		log_debug("%s: created on disk: read once written", d->o->config);
		d->reload = d->forced;
		d->settle = SETTLE_NEW;
	} else if (change != FILE_UNCHANGED) {
		log_debug("%s: changed on disk", d->o->config);
		d->reload = true;
		if (!in_pass || change != FILE_WRITTEN)
			daemon_schedule(d, 0, change == FILE_WRITTEN ? 0 : DEBOUNCE_MS);
	}
}

static void handle_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info("%s: reloading %s (SIGHUP)", d->node, d->o->config);
			notify_send(&d->notify, "RELOADING=1\nMONOTONIC_USEC=%lld",
				    daemon_clock_ms(CLOCK_MONOTONIC) * 1000);
			d->reload = d->forced = d->reloading = true;
			daemon_schedule(d, 0, 0);
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
	int got;

	d->check_at = daemon_now_ms() + CHECK_MS;
	file_watch_retry(&d->watch);
	/*
	 * Written in place (`cmd > FILE` empties it first), a file may be half
	 * there: read it once a check finds it as the one before did. The close
	 * after writing, or a rename, is read at once (inotify).
	 */
	if (def_source_changed(&d->src) || d->settle == SETTLE_NEW) {
		d->settle = SETTLE_SEEN;
	} else if (d->settle == SETTLE_SEEN) {
		log_debug("%s: changed on disk (periodic check)", d->o->config);
		d->settle = SETTLE_NONE;
		d->reload = true;
		daemon_schedule(d, 0, 0);
	}
	if (view_full_due(&d->view, daemon_now_ms() / 1000) && !d->pass_at) {
		log_debug("%s: reading the whole node again (every %d s)", d->node, VIEW_FULL_S);
		daemon_schedule(d, REASON_SETTLE, 0);
	}
	if (def_retry_key_changed(&d->pending, d->o->key_file) && !d->pass_at)
		daemon_schedule(d, 0, 0); /* a rotation's new key: its definition waits */
	if (frr_running_recheck_due() && !d->pass_at)
		daemon_schedule(d, REASON_KERNEL, 0); /* FRR's running config changed by hand? */
	if (resolve_poll()) {
		log_debug("a peer endpoint name resolved differently: planning again");
		daemon_schedule(d, REASON_PEERS, 0);
	}
	if (!d->wg_known || d->pass_at)
		return;
	got = wg_get(d->backend, FABRIC_IFNAME, &dev);
	if (got == 0)
		monitor_wg_seen(d->monitor, dev); /* its endpoint changes, from the same read */
	if (got < 0 || wg_signature(dev) != d->wg_sig) {
		log_debug("fabric %s: WireGuard settings differ from the last pass", FABRIC_IFNAME);
		d->wg_known = false;
		daemon_schedule(d, REASON_PEERS, 0);
	}
	wg_device_free(dev);
}

static int arm_timer(struct daemon *d)
{
	long long next = d->check_at, now = daemon_now_ms();
	struct itimerspec its = {0};

	if (d->pass_at && d->pass_at < next)
		next = d->pass_at;
	if (d->wake_at && d->wake_at < next)
		next = d->wake_at;
	if (next <= now)
		next = now + 1; /* a zero it_value would disarm it */
	its.it_value.tv_sec = next / 1000;
	its.it_value.tv_nsec = (next % 1000) * 1000000;
	if (timerfd_settime(d->timer, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	return 0;
}

static int add_fd(struct daemon *d, int fd, uint32_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

	return epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev);
}

static int open_all(struct daemon *d)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	/* wireguard-go's start resets every disposition and the mask in the child */
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	d->sig = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->mon = kernel_watch_open();
	if (d->ep < 0 || d->sig < 0 || d->timer < 0 || !d->mon ||
	    def_source_watch(&d->src, &d->watch) < 0)
		return -1;
	if (add_fd(d, d->sig, EV_SIGNAL) || add_fd(d, d->watch.fd, EV_INOTIFY) ||
	    add_fd(d, d->timer, EV_TIMER) || add_fd(d, mnl_socket_get_fd(d->mon), EV_NETLINK))
		return -1;
	/* without nftables in the kernel there is no firewall table to follow */
	d->nft = nft_watch_open();
	if (d->nft && add_fd(d, mnl_socket_get_fd(d->nft), EV_NFT))
		return -1;
	return 0;
}

static void close_all(struct daemon *d)
{
	int fds[] = {d->ep, d->sig, d->timer};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	if (d->mon)
		mnl_socket_close(d->mon);
	if (d->nft)
		mnl_socket_close(d->nft);
	file_watch_close(&d->watch);
	monitor_close(d->monitor);
	notify_close(&d->notify);
	cluster_free(d->cluster);
	cluster_free(d->roam_base);
	def_retry_drop(&d->pending);
	free(d->failed_text);
	free(d->mtus.mtus);
	keyfile_store_free(&d->keys); /* wiped */
	view_free(&d->view);
	converged_free(&d->converged);
	node_lock_release(&d->lifetime);
}

static void dispatch(struct daemon *d, const struct epoll_event *ev)
{
	unsigned int events;
	uint64_t ticks;

	switch (ev->data.u32) {
	case EV_SIGNAL:
		handle_signal(d);
		break;
	case EV_INOTIFY:
		daemon_file_changed(d, file_watch_read(&d->watch), false);
		break;
	case EV_NETLINK:
	case EV_NFT:
		events = ev->data.u32 == EV_NFT ? nft_watch_read(d->nft, &d->view)
						: kernel_watch_read(d->mon, &d->view);
		if (events & KERNEL_OVERFLOW)
			log_info("kernel notifications overflowed (ENOBUFS): reading everything "
				 "again");
		if (events & KERNEL_REMOTE_MOVED)
			route_cache_refresh_node(d->cluster, d->node); /* once per read */
		if (events & (KERNEL_CHANGED | KERNEL_OVERFLOW))
			daemon_schedule(d, REASON_KERNEL,
					(events & KERNEL_OVERFLOW) ? 0 : DEBOUNCE_MS);
		break;
	case EV_TIMER:
		if (read(d->timer, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
			log_debug("timer: %s", strerror(errno));
		break;
	}
}

/*
 * Startup: the definition must be valid and name this node; the first pass
 * must converge. 0, -1 on failure, 1 when asked to stop before the first pass.
 */
static int start(struct daemon *d)
{
	size_t self;

	if (def_source_load_first(&d->src, &d->cluster) < 0 ||
	    session_find_self(d->o, d->cluster, &self) < 0)
		return -1;
	snprintf(d->node, sizeof(d->node), "%s", d->cluster->nodes[self].name);
	if (node_daemon_lock_take(&d->lifetime, d->node, d->cluster->name) < 0)
		return -1;
	if (d->src.pve)
		log_info("%s: fabricd run: following Proxmox SDN %s and %s, grace %u s", d->node,
			 d->src.files[0], d->src.files[1], d->o->grace);
	else
		log_info("%s: fabricd run: definition %s, grace %u s", d->node, d->o->config,
			 d->o->grace);
	d->reasons = REASON_STARTUP;
	if (daemon_pass(d) < 0) {
		if (d->stop)
			return 1; /* stopped while waiting for the node (logged) */
		log_error("%s: the first convergence failed; fix the errors above and start "
			  "fabricd again",
			  d->node);
		return -1;
	}
	notify_send(&d->notify, "READY=1\nSTATUS=%s", d->status);
	return 0;
}

int daemon_run(const struct options *given)
{
	struct options o_copy = *given, *o = &o_copy;
	struct daemon d = {
	    .o = o, .ep = -1, .sig = -1, .timer = -1, .watch = {.fd = -1}, .lifetime = {.fd = -1}};
	int ret = 0;

	/*
	 * One malloc arena for the daemon's threads too (the guard's reader in a
	 * pass, the probes): each thread's arena kept its own free and partly
	 * used pages between passes; at 64 nodes x 1024 vnets the RSS after
	 * 1000 reloads went 7.9 -> 7.5 MiB (README, "Scale"). The threads
	 * allocate little, so they hardly wait for one another.
	 */
	mallopt(M_ARENA_MAX, 1);
	def_source_init(&d.src, given);
	o->config = d.src.files[0]; /* messages name what the definition comes from */

	notify_open(&d.notify);
	if (open_all(&d) < 0) {
		log_error("run: cannot set up the event loop: %s", strerror(errno));
		close_all(&d);
		return 1;
	}
	if (monitor_open(o, &d.monitor) < 0 || /* it said why */
	    (monitor_fd(d.monitor) >= 0 && add_fd(&d, monitor_fd(d.monitor), EV_METRICS) < 0)) {
		close_all(&d);
		return 1;
	}
	ret = start(&d);
	if (ret != 0) {
		close_all(&d);
		return ret < 0 ? 1 : 0;
	}
	d.check_at = daemon_now_ms() + CHECK_MS;
	while (!d.stop) {
		struct epoll_event evs[8];
		long long now;
		int n;

		/* without its timer the daemon would stop checking and retrying: stop loudly */
		if (arm_timer(&d) < 0) {
			log_error("run: cannot arm the timer: %s; stopping (the fabric stays up)",
				  strerror(errno));
			ret = 1;
			break;
		}
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
		now = daemon_now_ms();
		if (now >= d.check_at)
			check(&d);
		if (monitor_tick(d.monitor) && !d.pass_at)
			daemon_schedule(&d, REASON_KERNEL, 0);
		if (d.wake_at && now >= d.wake_at) {
			d.wake_at = 0;
			daemon_schedule(&d, REASON_RETIRE, 0);
		}
		if (d.pass_at && daemon_now_ms() >= d.pass_at) {
			d.pass_at = 0;
			daemon_pass(&d);
			/* not before the file was read: the node may have been busy (run_pass) */
			if (d.reloading && !d.reload) {
				d.reloading = false;
				notify_send(&d.notify, "READY=1\nSTATUS=%s", d.status);
			}
		}
	}
	notify_send(&d.notify, "STOPPING=1");
	close_all(&d);
	return ret;
}
