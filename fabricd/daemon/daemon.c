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

#include "engine/ifupdown.h"
#include "engine/converged.h"
#include "engine/frr.h"
#include "engine/route_cache.h"
#include "engine/session.h"
#include "definition/config.h"
#include "definition/keyfile.h"
#include "daemon/daemon.h"
#include "daemon/report.h"
#include "daemon/retry.h"
#include "daemon/roam.h"
#include "daemon/source.h"
#include "daemon/watch.h"
#include "base/log.h"
#include "daemon/notify.h"
#include "engine/resolve.h"
#include "engine/lock.h"
#include "daemon/monitor.h"
#include "daemon/wg_hung.h"

#define DEBOUNCE_MS  30
#define CHECK_MS     500
#define RETRY_MIN_MS 250
#define RETRY_MAX_MS 30000
/* the fabric's WireGuard state unreadable (a hung wireguard-go): asked again this soon */
#define WG_UNREAD_RETRY_MS 1000

enum { EV_SIGNAL, EV_INOTIFY, EV_NETLINK, EV_NFT, EV_TIMER, EV_METRICS };
/* A definition file changed but maybe not whole: none, a check to come, one seen it. */
enum { SETTLE_NONE, SETTLE_NEW, SETTLE_SEEN };

struct daemon {
	const struct options *o;
	struct notify notify;
	int ep, sig, timer;
	struct file_watch watch;
	struct mnl_socket *mon, *nft;
	struct cluster *cluster;   /* the last good definition */
	struct def_retry pending;  /* a valid newer one that failed here so far */
	struct cluster *roam_base; /* the one before a change not yet applied in full */
	char node[FABRICD_NAME_MAX + 1];
	struct def_source src; /* the definition file, or Proxmox's (source.h) */
	bool def_invalid;      /* the file on disk is not the definition in force */
	bool reload, forced;   /* read the file in the next pass; forced: SIGHUP */
	int settle;	       /* SETTLE_*: a file to read once the periodic check finds it still */
	bool reloading;	       /* RELOADING=1 was sent; READY=1 follows the pass */
	bool stop;
	unsigned int reasons;		      /* of the next pass */
	long long pass_at, check_at, wake_at; /* CLOCK_MONOTONIC ms, 0 = not due */
	unsigned int failures;		      /* passes failed in a row */
	char *failed_text; /* what the last of them said (failures > 0): not said again */
	size_t held;	   /* vnets the last pass left as they are for a conflict */
	enum wg_backend backend;
	bool wg_known; /* wg_sig holds the WireGuard state of the last converged pass */
	uint64_t wg_sig;
	struct zone_mtus mtus; /* each zone's MTU as last reported */
	char status[256];
	struct monitor *monitor;    /* metrics and data-path probes (daemon/monitor.h) */
	struct keyfile_store keys;  /* private and preshared keys, read again when changed */
	uint64_t key_sig;	    /* the private key file as the pass found it (retry.h) */
	struct obs_view view;	    /* the observed state between passes (engine/view.h) */
	struct converged converged; /* the vnets the last pass found converged */
	struct node_lock lifetime;  /* one daemon per node (engine/lock.h) */
	struct wg_hung hung;	    /* since when wgfab0's wireguard-go has not answered */
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

__attribute__((format(printf, 2, 3))) static void set_status(struct daemon *d, const char *fmt, ...)
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

/* repeated: the pass failed as the one before, which said so (debug only) */
static void pass_failed(struct daemon *d, unsigned int reasons, bool repeated)
{
	unsigned int shift = d->failures < 7 ? d->failures : 7;
	long long delay = (long long)RETRY_MIN_MS << shift;

	if (delay > RETRY_MAX_MS)
		delay = RETRY_MAX_MS;
	d->failures++;
	view_invalidate(&d->view); /* the next pass reads everything again */
	if (reasons & REASON_STARTUP)
		return; /* no next pass: start() says so */
	(repeated ? log_debug : log_error)("%s: not converged; trying again in %.1f s", d->node,
					   delay / 1000.0);
	schedule(d, reasons | REASON_RETRY, delay);
	set_status(d, "not converged, retrying (see the log)");
}

/*
 * A due time in CLOCK_BOOTTIME seconds -> CLOCK_MONOTONIC ms, a little after,
 * so that the pass then sees it due. Neither clock moves with a wall-clock
 * step; they differ only by time suspended, which makes the wake-up late, not
 * early.
 */
static long long wake_from_boottime(long long boot_s)
{
	long long delay = boot_s * 1000 - clock_ms(CLOCK_BOOTTIME) + 20;

	return now_ms() + (delay < 20 ? 20 : delay);
}

static void converged_status(struct daemon *d, const struct session *s)
{
	char status[sizeof(d->status)];

	/* the conflict of each was said as it came (a warning of check_conflicts) */
	if (d->held && !s->r.n_held)
		log_info("%s: no vnet held by a conflict any more", d->node);
	d->held = s->r.n_held;
	if (d->pending.cluster)
		return; /* converged to the last good one: run_pass says a new one waits */
	report_converged(s, d->def_invalid, status, sizeof(status));
	set_status(d, "%s", status);
}

/* Another fabricd holds the node: look again this soon. */
#define LOCK_RETRY_MS 100

static int run_pass_locked(struct daemon *d);

/* One pass: 0 converged or applied, -1 failed (retry set), 1 none (the node is busy). */
static int run_pass(struct daemon *d)
{
	bool startup = d->reasons & REASON_STARTUP, waiting;
	struct node_lock lock;
	int ret;

	/*
	 * An apply or down holds the node: never interleave with it. Only the
	 * first pass waits; later ones look again soon, so the loop never blocks.
	 */
	ret =
	    node_lock_take(&lock, d->node, "run", startup ? d->o->lock_wait * 1000U : 0, !startup);
	if (ret == -EWOULDBLOCK && !startup) {
		log_debug("%s: another fabricd is changing the node; passing later", d->node);
		schedule(d, 0, LOCK_RETRY_MS);
		return 1; /* no pass: not counted as one */
	}
	if (ret == -EINTR) {
		d->stop = true; /* asked to stop while it waited: the signal is still pending */
		return -1;
	}
	if (ret < 0) {
		pass_failed(d, d->reasons, false);
		return -1;
	}
	ret = run_pass_locked(d);
	node_lock_release(&lock);
	waiting = def_retry_delay(&d->pending, now_ms()) >= 0;
	if (waiting) {
		schedule(d, REASON_RETRY, def_retry_delay(&d->pending, now_ms()));
		set_status(
		    d, "%s: new definition not applied yet, retrying: %s; last good one in force",
		    d->node, d->pending.first_error);
	}
	monitor_definition(d->monitor, !d->def_invalid && !waiting);
	return ret;
}

/* A valid new definition applied: it becomes the last good one. REASON_DEFINITION if it differs. */
static unsigned int adopt_candidate(struct daemon *d, struct cluster *cand, bool forced)
{
	unsigned int reasons = 0;

	def_retry_succeeded(&d->pending, d->o->config);
	if (report_definition(d->cluster, cand))
		reasons |= REASON_DEFINITION;
	else if (forced)
		log_info("%s: reloaded, no change", d->o->config);
	else if (d->def_invalid) /* after "not used": the file is right again, as in force */
		log_info("%s: valid again, the definition in force", d->o->config);
	/* kept until a pass applies in full: it says which endpoints moved */
	if (d->roam_base)
		cluster_free(d->cluster);
	else
		d->roam_base = d->cluster;
	d->cluster = cand; /* the session borrowed it: it stays valid */
	d->def_invalid = false;
	d->src.rejected = 0;
	monitor_reloaded(d->monitor);
	return reasons;
}

/* Applies the pass's plan, or records the converged state when it is empty. 0 or -1. */
static int apply_or_record(struct daemon *d, struct session *s, unsigned int reasons)
{
	int ret;

	if (s->plan.n) {
		converged_forget(&d->converged); /* the next pass plans every vnet again */
		ret = plan_apply(&s->r, &s->plan);
		report_plan(&s->plan, reasons); /* what was done: a failed op was said already */
		if (ret < 0)
			return -1;
		report_applied(&s->plan, d->node, reasons);
		session_tune_fabric(s, 0); /* the settling pass checks again */
		monitor_applied(d->monitor, &s->plan, reasons);
		/* read back what was applied: the next, empty pass records it */
		schedule(d, REASON_SETTLE, DEBOUNCE_MS);
		d->wg_known = false;
		return 0;
	}
	/* nothing to change: each vnet is converged until it or its kernel objects change */
	if (s->r.n_held)
		converged_forget(&d->converged); /* a held vnet was not planned */
	else
		(void)converged_record(&d->converged, &s->r, &s->want);
	session_tune_fabric(s, 0); /* wireguard-go binds anew when its port is set */
	d->backend = s->r.backend;
	d->wg_known = s->have.wg != NULL;
	if (s->have.wg)
		d->wg_sig = wg_signature(s->have.wg);
	if (reasons & REASON_STARTUP)
		log_info("%s: up to date, nothing to change (the running fabric is adopted)",
			 d->node);
	return 0;
}

/*
 * An inotify event of a definition file. One written whole is read at once;
 * one made anew (an editor's save: the old file moved aside), maybe still
 * empty, at its writer's close, or once the periodic check finds it the
 * same (a SIGHUP reads it all the same); anything else may have more coming.
 * in_pass: the pass that reads it runs now.
 */
static void file_changed(struct daemon *d, enum file_change change, bool in_pass)
{
	if (change == FILE_CREATED) {
		log_debug("%s: created on disk: read once written", d->o->config);
		d->reload = d->forced;
		d->settle = SETTLE_NEW;
	} else if (change != FILE_UNCHANGED) {
		log_debug("%s: changed on disk", d->o->config);
		d->reload = true;
		if (!in_pass || change != FILE_WRITTEN)
			schedule(d, 0, change == FILE_WRITTEN ? 0 : DEBOUNCE_MS);
	}
}

/* The definition this pass tries: the file read again, a failed one retried, or none (NULL). */
static struct cluster *pass_candidate(struct daemon *d, unsigned int reasons, bool forced)
{
	enum file_change change;
	struct cluster *cand;
	bool key_changed;

	d->key_sig = def_retry_key_sig(d->o->key_file); /* before this pass reads it */
	/*
	 * Then the definition's events since the loop woke: join --rotate-key
	 * writes it before the key, so a pass that reads the new key knows of
	 * the new definition (or sees the key move: pass_unplanned).
	 */
	change = reasons & REASON_STARTUP ? FILE_UNCHANGED : file_watch_read(&d->watch);
	file_changed(d, change, true);
	key_changed = d->pending.cluster && d->key_sig != d->pending.key_sig;
	if (!d->reload || (change == FILE_CHANGED && !d->forced))
		return def_retry_take(&d->pending, (reasons & REASON_KERNEL) || key_changed,
				      now_ms());
	d->reload = d->forced = false;
	d->settle = SETTLE_NONE;
	def_retry_drop(&d->pending); /* the file changed: what it says now counts */
	cand = def_source_candidate(&d->src, d->node, d->cluster->name, forced);
	if (!cand)
		d->def_invalid = true;
	return cand;
}

/*
 * A pass that could not plan. With the definition in force the guard is
 * repaired all the same, whatever blocks the rest, and the pass is retried;
 * a new definition waits (daemon/retry.h) while the last good one stays.
 * Takes cand and log_text. -1 or 0, as run_pass_locked.
 */
static int pass_unplanned(struct daemon *d, struct session *s, struct cluster *cand, char *log_text,
			  unsigned int reasons)
{
	/*
	 * The key file changed during the pass: a rotation's second step (join
	 * --rotate-key renames KEY.new over KEY right after it wrote the
	 * definition), which the last good definition or the new one may have
	 * met between reading the key and KEY.new. Its failure is no news; the
	 * pass is tried again at once, with the definition that waits for that
	 * key (pass_candidate) or the new file (its event comes now). Not the
	 * first pass: it must converge (start).
	 */
	bool key_moved =
	    !(reasons & REASON_STARTUP) && def_retry_key_sig(d->o->key_file) != d->key_sig;
	bool repeated = false;

	if (!cand && log_text && !key_moved) {
		/* a conflict that stays: said once, not at each retry (30 s apart at most) */
		repeated = d->failures && d->failed_text && !strcmp(d->failed_text, log_text);
		if (!repeated)
			fputs(log_text, stderr);
		free(d->failed_text);
		d->failed_text = strdup(log_text);
	}
	if (!cand)
		session_repair_guard(s);
	session_free(s);
	view_invalidate(&d->view);
	converged_forget(&d->converged);
	if (key_moved) {
		log_debug("%s: the private key changed during the pass: trying the definition "
			  "that waits for it",
			  d->node);
		free(log_text);
		if (cand)
			def_retry_again(&d->pending, cand, d->key_sig);
		schedule(d, reasons & ~REASON_KERNEL, 0);
		return 0;
	}
	if (!cand) {
		free(log_text);
		pass_failed(d, reasons, repeated);
		return -1;
	}
	def_retry_failed(&d->pending, cand, log_text, d->o->config, now_ms());
	d->pending.key_sig = d->key_sig;
	free(log_text);
	/* the last good definition, for whatever else this pass was for (and STATUS) */
	schedule(d, reasons & ~REASON_KERNEL, 0);
	return 0;
}

/* After a pass that applied: its WireGuard part too, or it waits (daemon/wg_hung.h). */
static void wg_settled(struct daemon *d, const struct session *s)
{
	if (s->have.wg_error) {
		schedule(d, REASON_PEERS, WG_UNREAD_RETRY_MS); /* moved endpoints are set then */
		return;
	}
	cluster_free(d->roam_base); /* applied: every moved endpoint is set */
	d->roam_base = NULL;
}

static int run_pass_locked(struct daemon *d)
{
	unsigned int reasons = d->reasons;
	struct cluster *cand = NULL;
	bool forced = d->forced, captured;
	double started = clock_mono_ms(), loaded, planned;
	long faults = log_is_verbose() ? report_minor_faults() : 0;
	char *log_text;
	long long wake = 0;
	struct session s;
	int ret;

	d->reasons = 0;
	/* what changed up to now: the view is brought up to date with it in this pass */
	if (kernel_watch_read(d->mon, &d->view) & KERNEL_REMOTE_MOVED)
		route_cache_refresh_node(d->cluster, d->node);
	if (d->nft)
		nft_watch_read(d->nft, &d->view);
	if (log_is_verbose()) {
		char why[96];

		log_debug("pass at %.3f: %s%s%s", clock_ms(CLOCK_REALTIME) / 1000.0,
			  report_reason_names(reasons, why, sizeof(why)),
			  reasons && d->reload ? ", " : "", d->reload ? "read the definition" : "");
	}
	cand = pass_candidate(d, reasons, forced);
	loaded = clock_mono_ms();
	/*
	 * A failure that repeats is logged once (daemon/retry.h); one during a
	 * key rotation is held back (pass_unplanned). One vnet's conflict holds
	 * that vnet alone, but not in the first pass (as apply, it changes
	 * nothing while any lasts: the daemon stops), nor where a new
	 * definition adds or changes that vnet (it waits as a whole).
	 */
	captured = log_capture_begin() == 0;
	ret = session_open_cluster(&s, d->o, cand ? cand : d->cluster) < 0 ||
	      session_use_view(&s, &d->view, &d->converged,
			       reasons & REASON_STARTUP ? NULL : d->cluster) < 0 ||
	      session_load_keys_kept(&s, d->o, &d->keys) < 0 ||
	      roam_mark_moved(&s.r,
			      d->roam_base ? d->roam_base
			      : cand	   ? d->cluster
					   : NULL,
			      cand ? cand : d->cluster) < 0 ||
	      session_plan(&s) < 0;
	log_text = captured ? log_capture_end() : NULL;
	wg_hung_seen(&d->hung, s.r.backend, s.have.wg_error, now_ms());
	if (ret)
		return pass_unplanned(d, &s, cand, log_text, reasons);
	if (log_text)
		fputs(log_text, stderr); /* warnings of a definition that did apply */
	free(log_text);
	if (cand)
		reasons |= adopt_candidate(d, cand, forced);
	reasons |= report_mtus(&d->mtus, &s.want, s.cluster, reasons);
	planned = clock_mono_ms();
	/* before a port joins a bridge it keeps; without that file, as apply: no change */
	ret = ifupdown_sync(&s.want, s.ifupdown_file) < 0 ? -1 : apply_or_record(d, &s, reasons);
	if (s.plan.n)
		report_pass_times(&s, started, loaded, planned, faults);
	if (ret < 0) {
		session_free(&s);
		pass_failed(d, reasons, false);
		return -1;
	}
	wg_settled(d, &s);
	/* the retire stage's next step: an ordinary pass plans and applies it when due */
	wake = plan_next_due(&s.plan);
	d->wake_at = wake ? wake_from_boottime(wake) : 0;
	converged_status(d, &s);
	monitor_converged(d->monitor, &s);
	session_free(&s);
	/* the log's last word on a problem is not its error: it cleared */
	if (d->failures)
		log_info("%s: converged again after %u failed pass%s", d->node, d->failures,
			 d->failures == 1 ? "" : "es");
	d->failures = 0;
	return 0;
}

/* A pass this long is logged (--verbose): what came due meanwhile waited for it. */
#define SLOW_PASS_MS 1000

/* A pass, counted and timed for the metrics. */
static int timed_pass(struct daemon *d)
{
	long long started = now_ms(), took;
	int ret;

	monitor_pass_begin(d->monitor);
	ret = run_pass(d);
	if (ret > 0)
		return 0;
	monitor_pass_end(d->monitor, ret == 0);
	took = now_ms() - started;
	if (took >= SLOW_PASS_MS)
		log_debug("pass took %.1f s (a slow kernel, wireguard-go or DNS)", took / 1000.0);
	/*
	 * A pass's observed state and plan are freed, but glibc keeps the pages
	 * (at 64 nodes x 1024 VNIs the daemon idled at the pass's peak, 12 MiB):
	 * give them back, so an idle daemon holds only what it keeps.
	 */
	malloc_trim(0);
	return ret;
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
	int got;

	d->check_at = now_ms() + CHECK_MS;
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
		schedule(d, 0, 0);
	}
	if (view_full_due(&d->view, now_ms() / 1000) && !d->pass_at) {
		log_debug("%s: reading the whole node again (every %d s)", d->node, VIEW_FULL_S);
		schedule(d, REASON_SETTLE, 0);
	}
	if (def_retry_key_changed(&d->pending, d->o->key_file) && !d->pass_at)
		schedule(d, 0, 0); /* a rotation's new key: its definition waits */
	if (frr_running_recheck_due() && !d->pass_at)
		schedule(d, REASON_KERNEL, 0); /* FRR's running config changed by hand? */
	if (resolve_poll()) {
		log_debug("a peer endpoint name resolved differently: planning again");
		schedule(d, REASON_PEERS, 0);
	}
	if (!d->wg_known || d->pass_at)
		return;
	got = wg_get(d->backend, FABRIC_IFNAME, &dev);
	if (got == 0)
		monitor_wg_seen(d->monitor, dev); /* its endpoint changes, from the same read */
	if (got < 0 || wg_signature(dev) != d->wg_sig) {
		log_debug("fabric %s: WireGuard settings differ from the last pass", FABRIC_IFNAME);
		d->wg_known = false;
		schedule(d, REASON_PEERS, 0);
	}
	wg_device_free(dev);
}

static int arm_timer(struct daemon *d)
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
		file_changed(d, file_watch_read(&d->watch), false);
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
			schedule(d, REASON_KERNEL, (events & KERNEL_OVERFLOW) ? 0 : DEBOUNCE_MS);
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
	if (timed_pass(d) < 0) {
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
	d.check_at = now_ms() + CHECK_MS;
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
		now = now_ms();
		if (now >= d.check_at)
			check(&d);
		if (monitor_tick(d.monitor) && !d.pass_at)
			schedule(&d, REASON_KERNEL, 0);
		if (d.wake_at && now >= d.wake_at) {
			d.wake_at = 0;
			schedule(&d, REASON_RETIRE, 0);
		}
		if (d.pass_at && now_ms() >= d.pass_at) {
			d.pass_at = 0;
			timed_pass(&d);
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
