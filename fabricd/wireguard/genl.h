/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * genl.h - the kernel WireGuard backend: generic netlink family
 * "wireguard" for the device (wireguard/genl.c), rtnetlink for creating the link
 * with its owner mark and deleting it (wireguard/genl_link.c).
 *
 * Pure encoders and parsers (no sockets) do the work, so the exact bytes are
 * unit-tested without a kernel; the I/O functions only send what they build.
 *
 * Splitting a change over several WG_CMD_SET_DEVICE messages follows
 * wireguard-tools' kernel_set_device: device attributes go only into the
 * first message; when a peer or an allowed IP does not fit, the open nests
 * are closed (an allowed IP half written is cancelled), the message is sent,
 * and the next one resumes at that peer. A peer whose allowed IPs continue
 * in a later message carries there only its public key, WGPEER_F_UPDATE_ONLY
 * and the remaining allowed IPs: WGPEER_F_REPLACE_ALLOWEDIPS, the preshared
 * key, endpoint and keepalive went out with its first part and must not be
 * repeated, or the second message would drop the first part's allowed IPs.
 * (UPDATE_ONLY is our addition: the peer exists by then, and if it vanished
 * in between it must not come back with half its allowed IPs.)
 * WGDEVICE_F_REPLACE_PEERS is never sent.
 */
#ifndef FABRICD_WG_GENL_H
#define FABRICD_WG_GENL_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wireguard/wg.h"

/* The error text when the kernel has no WireGuard. */
#define WG_GENL_NO_KERNEL                                                                          \
	"this kernel has no WireGuard: load the wireguard module or use --wg-backend userspace"

/* Where the next WG_CMD_SET_DEVICE message resumes. Zero it before the first. */
struct wg_genl_cursor {
	size_t peer;	       /* index of the next peer to encode */
	size_t allowed_ip;     /* index of that peer's next allowed IP */
	bool peer_started;     /* that peer's first part was sent: only allowed IPs follow */
	unsigned int messages; /* messages written so far */
	bool done;	       /* the whole change is encoded */
	int error;	       /* why the encoder returned 0: -EMSGSIZE, -EINVAL */
};

/*
 * Writes the next WG_CMD_SET_DEVICE message for change into buf (at most
 * buflen bytes, NLM_F_REQUEST | NLM_F_ACK, the given seq and portid) and
 * advances cursor; returns the message length. Call until cursor->done.
 * Returns 0 when buf cannot hold even the next step (cursor->error =
 * -EMSGSIZE) or the change is malformed (-EINVAL).
 */
size_t wg_genl_encode_set(const struct wg_device *change, uint16_t family_id, uint32_t seq,
			  uint32_t portid, void *buf, size_t buflen, struct wg_genl_cursor *cursor);

/*
 * Writes a WG_CMD_GET_DEVICE request for ifname (NLM_F_REQUEST | NLM_F_DUMP).
 * Returns its length, 0 when buflen is too small.
 */
size_t wg_genl_encode_get(const char *ifname, uint16_t family_id, uint32_t seq, uint32_t portid,
			  void *buf, size_t buflen);

/*
 * Merges one WG_CMD_GET_DEVICE dump message into dev: device attributes,
 * and peers appended in order; a peer continued from the previous message
 * (same public key as dev's last peer, as the kernel splits long allowed-IP
 * lists) is coalesced into it. 0, -EINVAL for a malformed message, -ENOMEM.
 */
int wg_genl_parse_device(const struct nlmsghdr *nlh, struct wg_device *dev);

/*
 * Writes the two rtnetlink requests that create ifname already marked as
 * owned, to go out in one sendmsg, both NLM_F_REQUEST | NLM_F_ACK, with the
 * given portid: RTM_NEWLINK NLM_F_CREATE | NLM_F_EXCL (sequence number seq)
 * with IFLA_IFNAME and IFLA_LINKINFO { IFLA_INFO_KIND "wireguard" }, then
 * RTM_NEWLINK without create flags (seq + 1) naming the link by IFLA_IFNAME
 * and setting IFLA_IFALIAS to alias (the kernel ignores an alias in a
 * creating message). Returns the length of both; 0 when buflen is too small
 * or alias is empty or longer than WG_ALIAS_MAX.
 */
size_t wg_genl_encode_create(const char *ifname, const char *alias, uint32_t seq, uint32_t portid,
			     void *buf, size_t buflen);

/* Whether the "wireguard" generic netlink family resolves (the module is loaded). */
bool wg_genl_available(void);
/* Closes the process's generic netlink socket (it opens again when needed). */
void wg_genl_close(void);
/* How often this process opened that socket and resolved the family (for tests, --verbose). */
void wg_genl_counts(unsigned int *opened, unsigned int *resolved);
/* For tests: takes id as the family's (a stale id the kernel answers with ENOENT). */
void wg_genl_test_family(uint16_t id);

/* The backend itself; wireguard/wg.c dispatches here. Errors go to wg_last_error(). */
int wg_genl_create(const char *ifname, const char *alias);
int wg_genl_destroy(const char *ifname);
bool wg_genl_exists(const char *ifname);
int wg_genl_get(const char *ifname, struct wg_device **out);
int wg_genl_set(const struct wg_device *change);

#endif
