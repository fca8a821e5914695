/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/probe.h - data-path probes: does a guest-sized frame get from this
 * node's vnet bridge to each peer's and back, per zone (so per transport)?
 *
 * The probe is an Ethernet frame sent on the zone's first vnet bridge, as a
 * guest's frame enters it: the bridge forwards it to the VXLAN port, the
 * kernel encapsulates it (plain: over the underlay; secure: into wgfab0 and
 * WireGuard), the peer's bridge delivers it to its fabricd, which answers
 * with a frame of the same size. The first probe of a round has exactly the
 * zone MTU as payload, what a guest at that MTU sends (an Ethernet frame is
 * never fragmented inside the overlay, so a frame that does not fit is lost
 * as a guest's would be). When it is lost and a small one passes, the path is
 * an MTU black hole and a binary search finds the largest size that passes.
 *
 * A thread of its own runs the probes and answers the peers' (see probe.c
 * for why), so the daemon's loop never waits for a reply.
 */
#ifndef FABRICD_DAEMON_PROBE_H
#define FABRICD_DAEMON_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "definition/model.h"

struct probe_target {
	char peer[FABRICD_NAME_MAX + 1];
	char zone[FABRICD_NAME_MAX + 1];
	char bridge[16];       /* the zone's first vnet on this node */
	const char *transport; /* static: "plain" or "secure" */
	unsigned int mtu;      /* the zone MTU */
	/* a switch's grace: the old transport still receives (a peer that did not follow works) */
	bool old_receives;
};

struct probe_result {
	struct probe_target target;
	bool measured;	      /* at least one round ran */
	bool reachable;	      /* some size came back */
	bool black_hole;      /* the zone MTU is lost, a smaller size passes */
	unsigned int largest; /* the largest size that came back, 0 = none */
	double rtt_seconds;   /* of the last reply */
	long long checked_at; /* epoch seconds of the last round */
};

struct probe;

/*
 * Starts the thread: a round every interval_ms (jittered by +-20 %); the
 * results go to state_file (JSON, written atomically) for `fabricd status`.
 * 0, or -1 (logged).
 */
int probe_start(unsigned int interval_ms, const char *state_file, struct probe **out);
/*
 * What to probe from now on (copied); the first call also starts the rounds.
 * A path that changed (transport, MTU, the end of a switch's grace) or a new
 * one is measured in a round at once, not at the next: its last result said
 * nothing about it.
 */
void probe_configure(struct probe *p, const char *cluster, const char *node,
		     const struct probe_target *t, size_t n);
/* A copy of the current results (free() it); returns how many. */
size_t probe_results(struct probe *p, struct probe_result **out);
void probe_stop(struct probe *p);

#endif
