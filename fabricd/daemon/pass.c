// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/pass.c - one pass of `fabricd run`: the definition it tries (the
 * file read again, a failed one retried, or the one in force), an engine
 * session on the kept view, the plan applied or the converged state
 * recorded, and what the daemon says about it. The event loop (daemon.c)
 * decides when a pass runs; a pass schedules the next one it needs (a
 * retry, the settling read-back, a retire step).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "daemon/daemon_priv.h"
#include "daemon/roam.h"
#include "engine/ifupdown.h"
#include "engine/route_cache.h"
#include "engine/session.h"

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
	daemon_schedule(d, reasons | REASON_RETRY, delay);
	daemon_set_status(d, "not converged, retrying (see the log)");
}

/*
 * A due time in CLOCK_BOOTTIME seconds -> CLOCK_MONOTONIC ms, a little after,
 * so that the pass then sees it due. Neither clock moves with a wall-clock
 * step; they differ only by time suspended, which makes the wake-up late, not
 * early.
 */
static long long wake_from_boottime(long long boot_s)
{
	long long delay = boot_s * 1000 - daemon_clock_ms(CLOCK_BOOTTIME) + 20;

	return daemon_now_ms() + (delay < 20 ? 20 : delay);
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
	daemon_set_status(d, "%s", status);
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
		daemon_schedule(d, 0, LOCK_RETRY_MS);
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
	waiting = def_retry_delay(&d->pending, daemon_now_ms()) >= 0;
	if (waiting) {
		daemon_schedule(d, REASON_RETRY, def_retry_delay(&d->pending, daemon_now_ms()));
		daemon_set_status(
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

/*
 * plan_apply, its errors held back until it is known whether the kernel
 * overtook the pass (a link deleted under it: engine/reconcile.h). Such a
 * pass is planned again at once and its errors said only with --verbose;
 * not twice in a row, so a failure that lasts is said. 0 applied, 1
 * overtaken, -1 failed (said).
 */
static int apply_plan(struct daemon *d, struct session *s, unsigned int reasons)
{
	bool captured = !log_is_verbose() && log_capture_begin() == 0;
	int ret = plan_apply(&s->r, &s->plan);
	char *text = captured ? log_capture_end() : NULL;
	bool overtaken = ret < 0 && !d->overtaken && !(reasons & REASON_STARTUP) &&
			 plan_failed_on_vanished_links(&s->plan);

	if (text && !overtaken)
		fputs(text, stderr);
	free(text);
	if (overtaken)
		log_debug("%s: a link went away while the pass applied; planning again", d->node);
	d->overtaken = overtaken;
	return overtaken ? 1 : ret < 0 ? -1 : 0;
}

/* Applies the pass's plan, or records the converged state when it is empty. 0, 1 or -1. */
static int apply_or_record(struct daemon *d, struct session *s, unsigned int reasons)
{
	int ret;

	if (s->plan.n) {
		converged_forget(&d->converged); /* the next pass plans every vnet again */
		ret = apply_plan(d, s, reasons);
		report_plan(&s->plan, reasons); /* what was done: a failed op was said already */
		if (ret != 0)
			return ret;
		report_applied(&s->plan, d->node, reasons);
		session_tune_fabric(s, 0); /* the settling pass checks again */
		monitor_applied(d->monitor, &s->plan, reasons);
		/* read back what was applied: the next, empty pass records it */
		daemon_schedule(d, REASON_SETTLE, DEBOUNCE_MS);
		d->wg_known = false;
		return 0;
	}
	/* nothing to change: each vnet is converged until it or its kernel objects change */
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
	daemon_file_changed(d, change, true);
	key_changed = d->pending.cluster && d->key_sig != d->pending.key_sig;
	if (!d->reload || (change == FILE_CHANGED && !d->forced))
		return def_retry_take(&d->pending, (reasons & REASON_KERNEL) || key_changed,
				      daemon_now_ms());
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
		daemon_schedule(d, reasons & ~REASON_KERNEL, 0);
		return 0;
	}
	if (!cand) {
		free(log_text);
		pass_failed(d, reasons, repeated);
		return -1;
	}
	def_retry_failed(&d->pending, cand, log_text, d->o->config, daemon_now_ms());
	d->pending.key_sig = d->key_sig;
	free(log_text);
	/* the last good definition, for whatever else this pass was for (and STATUS) */
	daemon_schedule(d, reasons & ~REASON_KERNEL, 0);
	return 0;
}

/* After a pass that applied: its WireGuard part too, or it waits (daemon/wg_hung.h). */
static void wg_settled(struct daemon *d, const struct session *s)
{
	if (s->have.wg_error) {
		daemon_schedule(d, REASON_PEERS,
				WG_UNREAD_RETRY_MS); /* moved endpoints are set then */
		return;
	}
	cluster_free(d->roam_base); /* applied: every moved endpoint is set */
	d->roam_base = NULL;
}

/* A pass that applied its plan or found nothing to do: what comes next, and the status. */
static void pass_succeeded(struct daemon *d, struct session *s)
{
	long long wake;

	wg_settled(d, s);
	/* the retire stage's next step: an ordinary pass plans and applies it when due */
	wake = plan_next_due(&s->plan);
	d->wake_at = wake ? wake_from_boottime(wake) : 0;
	converged_status(d, s);
	monitor_converged(d->monitor, s);
	session_free(s);
	/* the log's last word on a problem is not its error: it cleared */
	if (d->failures)
		log_info("%s: converged again after %u failed pass%s", d->node, d->failures,
			 d->failures == 1 ? "" : "es");
	d->failures = 0;
	d->overtaken = false;
}

static int run_pass_locked(struct daemon *d)
{
	unsigned int reasons = d->reasons;
	struct cluster *cand = NULL;
	bool forced = d->forced, captured;
	double started = clock_mono_ms(), loaded, planned;
	long faults = log_is_verbose() ? report_minor_faults() : 0;
	char *log_text;
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

		log_debug("pass at %.3f: %s%s%s", daemon_clock_ms(CLOCK_REALTIME) / 1000.0,
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
	wg_hung_seen(&d->hung, s.r.backend, s.have.wg_error, daemon_now_ms());
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
	if (ret > 0) { /* overtaken: planned again with what went */
		session_free(&s);
		view_invalidate(&d->view);
		daemon_schedule(d, reasons, 0);
		return 0;
	}
	if (ret < 0) {
		session_free(&s);
		pass_failed(d, reasons, false);
		return -1;
	}
	pass_succeeded(d, &s);
	return 0;
}

/* A pass this long is logged (--verbose): what came due meanwhile waited for it. */
#define SLOW_PASS_MS 1000

int daemon_pass(struct daemon *d)
{
	long long started = daemon_now_ms(), took;
	int ret;

	monitor_pass_begin(d->monitor);
	ret = run_pass(d);
	if (ret > 0)
		return 0;
	monitor_pass_end(d->monitor, ret == 0);
	took = daemon_now_ms() - started;
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
