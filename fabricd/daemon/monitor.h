/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/monitor.h - what `fabricd run` tells the outside about itself:
 * Prometheus metrics (--metrics ADDR:PORT, --metrics-file PATH) and the
 * data-path probes (daemon/probe.h). The daemon calls these hooks; each is
 * NULL-safe and cheap when nothing is enabled.
 */
#ifndef FABRICD_DAEMON_MONITOR_H
#define FABRICD_DAEMON_MONITOR_H

#include <stdbool.h>

#include "engine/options.h"
#include "engine/plan.h"
#include "engine/session.h"
#include "wireguard/wg.h"

struct monitor;

/* Starts the HTTP server and the probes as o asks. 0, or -1 (logged: the daemon cannot start). */
int monitor_open(const struct options *o, struct monitor **out);
void monitor_close(struct monitor *m);

/* Around every pass of the loop: counts it and its duration. */
void monitor_pass_begin(struct monitor *m);
void monitor_pass_end(struct monitor *m, bool ok);
/* A definition was read again (a change on disk, SIGHUP): the file is written at once. */
void monitor_reloaded(struct monitor *m);
/* After a pass: whether the definition file as it is now is the one in force. */
void monitor_definition(struct monitor *m, bool in_force);
/* A plan was applied for reasons (enum pass_reason): drift repairs are counted by kind. */
void monitor_applied(struct monitor *m, const struct plan *p, unsigned int reasons);
/* A pass converged: the zones, vnets and peers to report on and to probe. */
void monitor_converged(struct monitor *m, const struct session *s);
/*
 * The fabric's device as the daemon's periodic check read it (NULL: none):
 * the peers' endpoints are compared with the last seen, without a read of
 * its own.
 */
void monitor_wg_seen(struct monitor *m, const struct wg_device *dev);
/*
 * What the loop polls (EPOLLIN) besides: readable when a scrape waits for a
 * text, which the next monitor_tick() renders. -1: none (no --metrics).
 */
int monitor_fd(const struct monitor *m);
/*
 * From the loop, at least every 500 ms and after each event: renders the
 * metrics when a scrape or the file needs them.
 * True when FRR's zebra and bgpd run again after they were down: plan again
 * (a daemon started by hand, without its configuration, lacks fabricd's part).
 */
bool monitor_tick(struct monitor *m);

#endif
