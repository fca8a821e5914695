/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uapi.h - the userspace WireGuard backend: one wireguard-go process per
 * device, configured over its UAPI socket WG_UAPI_RUN_DIR/<dev>.sock with the
 * cross-platform text protocol ("get=1" / "set=1", answers end "errno=N").
 *
 * wireguard-go is started detached (double fork, a process group of its
 * own in fabricd's session, SIGHUP ignored), so it outlives a short `fabricd apply` and is never
 * fabricd's zombie; its PID goes to WG_UAPI_RUN_DIR/<dev>.pid. Once it answers, the owner mark is
 * set as the alias of its TUN link. It is stopped only after /proc confirms the PID is
 * "wireguard-go <dev>" in our network namespace. wireguard/uapi.c has the protocol,
 * wireguard/uapi_proc.c the process.
 *
 * WG_UAPI_RUN_DIR is shared by every network namespace: two namespaces with
 * the same device name need separate mount namespaces (see DESIGN.md).
 */
#ifndef FABRICD_WG_UAPI_H
#define FABRICD_WG_UAPI_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>

#include "wireguard/wg.h"

#define WG_UAPI_RUN_DIR "/var/run/wireguard"

/*
 * Parses a "get=1" answer (ending with "errno=N") into dev, which must be
 * zeroed (ifname may be set). 0, the answer's error as -errno, -EPROTO for a
 * malformed answer, -ENOMEM. The device public key is derived from the
 * private key. Unknown keys are ignored.
 */
int wg_uapi_parse_get(const char *text, struct wg_device *dev);

/*
 * Builds the "set=1" request for change, ending with the blank line: only
 * flagged fields, peers one by one ("remove=true" or "update_only=true"),
 * never "replace_peers". Returns a malloc'ed text (*len bytes) to release
 * with wg_uapi_text_free(), or NULL (-errno in *err: -EINVAL, -ENOMEM).
 */
char *wg_uapi_encode_set(const struct wg_device *change, size_t *len, int *err);
/* Wipes (it may hold keys) and frees a text from wg_uapi_encode_set(). */
void wg_uapi_text_free(char *text, size_t len);

/* The backend itself; wireguard/wg.c dispatches here. Errors go to wg_last_error(). */
int wg_uapi_create(const char *ifname, const char *alias);
int wg_uapi_destroy(const char *ifname);
bool wg_uapi_exists(const char *ifname);
/*
 * Whether the last exchange with a wireguard-go timed out (stopped or hung:
 * still there); an answer or a socket gone clears it. Until then each
 * exchange waits 200 ms, not 5 s.
 */
bool wg_uapi_unanswered(void);
/* Whether it answers a get within the full 5 s (before it is ended as hung). */
bool wg_uapi_answers_in_full(const char *ifname);
int wg_uapi_get(const char *ifname, struct wg_device **out);
int wg_uapi_set(const struct wg_device *change);
/* The PID file names a live "wireguard-go <ifname>" in our network namespace. */
bool wg_uapi_started_by_fabricd(const char *ifname);
/* The wireguard-go serving ifname in this network namespace (pid file, else /proc); 0. */
pid_t wg_uapi_pid(const char *ifname);
/*
 * Gives the UDP sockets of ifname's wireguard-go 7 MiB send and receive
 * buffers, as later wireguard-go versions do themselves; waits up to wait_ms
 * for them while an up device has none yet (wireguard-go binds a moment after
 * it sees the link go up). The number of sockets changed; 0 when there was
 * nothing to do or no way to (best effort).
 */
int wg_uapi_widen_udp_buffers(const char *ifname, unsigned int wait_ms);
/*
 * Waits (bounded) until the rtnetlink sockets of ifname's wireguard-go have
 * read the link events queued for them (wireguard/uapi_drain.c says why).
 */
void wg_uapi_wait_drained(const char *ifname);

#endif
