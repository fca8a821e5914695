// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/wg_hung.c - says when the fabric device's WireGuard state cannot be
 * read, and ends a wireguard-go fabricd started that stopped answering
 * (daemon/wg_hung.h).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "daemon/wg_hung.h"
#include "definition/desired.h"
#include "wireguard/uapi.h"
#include "base/log.h"

/* Once, when a pass first finds it unreadable. */
static void tell_unanswered(enum wg_backend backend)
{
	bool userspace = backend == WG_BACKEND_USERSPACE;
	bool ours = userspace && wg_uapi_started_by_fabricd(FABRIC_IFNAME);

	log_warn("fabric %s: its WireGuard state cannot be read (%s): its settings and peers "
		 "wait, everything else on the node is repaired meanwhile; %s",
		 FABRIC_IFNAME,
		 userspace ? "its wireguard-go does not answer on its socket: stopped, or hung?"
			   : "the kernel's WireGuard does not answer",
		 ours	     ? "fabricd ends that wireguard-go after 15 s without an answer and "
			       "starts another"
		 : userspace ? "end that wireguard-go (fabricd makes the device again)"
			     : "if it stays so, run `fabricd down` and apply again");
}

void wg_hung_seen(struct wg_hung *h, enum wg_backend backend, bool unanswered, long long now_ms)
{
	pid_t pid;

	if (!unanswered) {
		if (h->told)
			log_info("fabric %s: its WireGuard state is read again; its settings and "
				 "peers are repaired as the rest",
				 FABRIC_IFNAME);
		h->since_ms = 0;
		h->told = false;
		return;
	}
	if (!h->told)
		tell_unanswered(backend);
	h->told = true;
	if (backend != WG_BACKEND_USERSPACE)
		return;
	if (!h->since_ms)
		h->since_ms = now_ms;
	if (now_ms - h->since_ms < WG_HUNG_LIMIT_MS)
		return;
	h->since_ms = 0;
	/* only the one fabricd's PID file names: another's is the operator's to end */
	if (!wg_uapi_started_by_fabricd(FABRIC_IFNAME))
		return;
	/* each ask waited 200 ms meanwhile: a slow one is not ended, only one silent for 5 s */
	if (wg_uapi_answers_in_full(FABRIC_IFNAME))
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
