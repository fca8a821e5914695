/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/wg_hung.h - a wireguard-go fabricd started that stops answering.
 *
 * While wgfab0's wireguard-go does not answer on its socket (stopped,
 * deadlocked), its settings and peers cannot be read nor set; the daemon's
 * passes repair everything else meanwhile (engine/reconcile.h,
 * wg_unread_ok), say so once, and ask again every second (after one socket
 * timeout, each ask waits 200 ms, wireguard/uapi.c). The daemon is that
 * process's supervisor: after WG_HUNG_LIMIT_MS without an answer, and none
 * to a last ask that waits the full 5 s (a slow one is not ended), it ends it
 * (SIGKILL also ends a stopped one) and the next pass starts another, as
 * when it dies. A wireguard-go fabricd did not start (no PID file of its
 * own) is never ended: the warning says what to do.
 */
#ifndef FABRICD_WG_HUNG_H
#define FABRICD_WG_HUNG_H

#include <stdbool.h>

#include "wireguard/wg.h"

#define WG_HUNG_LIMIT_MS 15000

struct wg_hung {
	long long since_ms; /* CLOCK_MONOTONIC ms of the first pass it did not answer; 0 */
	bool told;	    /* that it cannot be read was logged; that it can again is due */
};

/*
 * After each pass's reading of the kernel: unanswered when the fabric device
 * exists but its WireGuard state could not be read (observed.wg_error). Logs
 * the first such pass and the first that reads it again. Ends
 * the process when it has not answered for WG_HUNG_LIMIT_MS: its link goes
 * with it, and that notification brings the pass that starts another.
 */
void wg_hung_seen(struct wg_hung *h, enum wg_backend backend, bool unanswered, long long now_ms);

#endif
