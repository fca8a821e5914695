/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/daemon_priv.h - what the event loop (daemon.c) and a pass (pass.c)
 * share: the daemon's state and the few calls each makes of the other.
 */
#ifndef FABRICD_DAEMON_PRIV_H
#define FABRICD_DAEMON_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <libmnl/libmnl.h>

#include "definition/keyfile.h"
#include "engine/converged.h"
#include "engine/lock.h"
#include "engine/options.h"
#include "engine/view.h"
#include "daemon/monitor.h"
#include "daemon/notify.h"
#include "daemon/report.h"
#include "daemon/retry.h"
#include "daemon/source.h"
#include "daemon/watch.h"
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
	bool overtaken;	   /* the last pass was (apply_plan): the next one's failure is said */
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

long long daemon_clock_ms(clockid_t id);
/* CLOCK_MONOTONIC ms */
long long daemon_now_ms(void);
/* Runs a pass delay_ms from now at the latest, for reasons (REASON_*, daemon/report.h). */
void daemon_schedule(struct daemon *d, unsigned int reasons, long long delay_ms);
/* The status line (systemd's STATUS=), sent when it changed. */
void daemon_set_status(struct daemon *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * An inotify event of a definition file (or none: FILE_UNCHANGED). in_pass:
 * the pass that reads it runs now.
 */
void daemon_file_changed(struct daemon *d, enum file_change change, bool in_pass);
/*
 * A pass (pass.c), counted and timed for the metrics: 0 converged, applied or
 * none due (the node busy: planned again soon), -1 failed (retry set).
 */
int daemon_pass(struct daemon *d);

#endif
