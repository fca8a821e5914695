// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/wg_hung.c - ends a wireguard-go fabricd started that stopped answering
 * (daemon/wg_hung.h).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "daemon/wg_hung.h"
#include "definition/desired.h"
#include "wireguard/uapi.h"
#include "base/log.h"

void wg_hung_seen(struct wg_hung *h, enum wg_backend backend, bool unanswered, long long now_ms)
{
	pid_t pid;

	if (!unanswered || backend != WG_BACKEND_USERSPACE) {
		h->since_ms = 0;
		return;
	}
	if (!h->since_ms)
		h->since_ms = now_ms;
	if (now_ms - h->since_ms < WG_HUNG_LIMIT_MS)
		return;
	h->since_ms = 0;
	/* only the one fabricd's PID file names: another's is the operator's to end */
	if (!wg_uapi_started_by_fabricd(FABRIC_IFNAME))
		return;
	pid = wg_uapi_pid(FABRIC_IFNAME);
	if (pid <= 0)
		return;
	log_warn("fabric %s: its wireguard-go (PID %d, started by fabricd) has not answered on "
		 "its socket for %d s (stopped or hung): ending it; the next pass starts another",
		 FABRIC_IFNAME, (int)pid, WG_HUNG_LIMIT_MS / 1000);
	if (kill(pid, SIGKILL) < 0)
		log_error("fabric %s: cannot end wireguard-go PID %d: %s; end it by hand",
			  FABRIC_IFNAME, (int)pid, strerror(errno));
}
