/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/wg_hung.h - a wireguard-go fabricd started that stops answering.
 *
 * While wgfab0's wireguard-go does not answer on its socket (stopped,
 * deadlocked), its settings and peers cannot be read nor set; the daemon's
 * passes repair everything else meanwhile (engine/reconcile.h,
 * wg_unread_ok). Its gets never hold up a pass for more than 200 ms
 * (wg_uapi_ask_briefly): one not answered by then stays asked, and the next
 * pass, a second later, reads its answer. It is said once when one ask has
 * waited WG_SILENT_TELL_MS (a slow one is read meanwhile, and not said), and
 * once when it is read again. The daemon is that process's supervisor: when
 * one ask has waited WG_HUNG_LIMIT_MS (a slow one answers it), it ends it
 * (SIGKILL also ends a stopped one) and the next pass starts another, as
 * when it dies. A wireguard-go fabricd did not start (no PID file of its
 * own) is never ended: the warning says what to do.
 */
#ifndef FABRICD_WG_HUNG_H
#define FABRICD_WG_HUNG_H

#include <stdbool.h>
#include <sys/types.h>

#include "wireguard/wg.h"

#define WG_SILENT_TELL_MS 5000 /* as long as a one-shot command waits for an answer */
#define WG_HUNG_LIMIT_MS  15000

struct wg_hung {
	bool told;   /* that it cannot be read was logged; that it can again is due */
	pid_t ended; /* the wireguard-go it ended, while its state is not read again; 0 */
};

/*
 * After each pass's reading of the kernel: unread when the fabric device
 * exists but its WireGuard state could not be read (observed.wg_error). Logs
 * the first such pass (of a wireguard-go, once its ask has waited
 * WG_SILENT_TELL_MS) and the first that reads it again. Ends the process
 * when its ask has waited WG_HUNG_LIMIT_MS: its link goes with it, and that
 * notification brings the pass that starts another.
 */
void wg_hung_seen(struct wg_hung *h, enum wg_backend backend, bool unread);

#endif
