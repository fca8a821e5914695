/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/wg_hung.h - a wireguard-go fabricd started that stops answering.
 *
 * While wgfab0's wireguard-go does not answer on its socket (stopped,
 * deadlocked), every pass stops at that conflict: no peer, and no other
 * object either, plain zones included, is repaired, and each attempt waits
 * for the socket's timeout. The daemon is that process's supervisor: after
 * WG_HUNG_LIMIT_MS without an answer it ends it (SIGKILL also ends a stopped
 * one) and the next pass starts another, as when it dies. A wireguard-go
 * fabricd did not start (no PID file of its own) is never ended: the
 * conflict says what to do.
 */
#ifndef FABRICD_WG_HUNG_H
#define FABRICD_WG_HUNG_H

#include <stdbool.h>

#include "wireguard/wg.h"

#define WG_HUNG_LIMIT_MS 15000

struct wg_hung {
	long long since_ms; /* CLOCK_MONOTONIC ms of the first pass it did not answer; 0 */
};

/*
 * After each pass's reading of the kernel: unanswered when the fabric device
 * exists but its WireGuard state could not be read (observed.wg_error). Ends
 * the process when it has not answered for WG_HUNG_LIMIT_MS: its link goes
 * with it, and that notification brings the pass that starts another.
 */
void wg_hung_seen(struct wg_hung *h, enum wg_backend backend, bool unanswered, long long now_ms);

#endif
