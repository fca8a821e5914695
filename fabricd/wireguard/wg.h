/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wireguard/wg.h - the WireGuard device, one interface over two backends:
 *   kernel:    generic netlink family "wireguard" (wireguard/genl.c)
 *   userspace: wireguard-go over its UAPI socket /var/run/wireguard/<dev>.sock (wg_uapi*.c)
 *
 * The containers follow wireguard-tools: a device holds peers, a peer holds
 * allowed IPs, and flags tell "not given" from zero. wg_set() applies a
 * partial change: only fields whose HAS_* bit is set are sent, peers are
 * added, changed or removed one by one (WGPEER_REMOVE_ME), and the whole
 * peer list is never replaced, so live sessions survive.
 */
#ifndef FABRICD_WG_H
#define FABRICD_WG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "base/addr.h"
#include "kmod/probe.h"

#define WG_KEY_LEN 32

enum wg_peer_flags {
	WGPEER_REMOVE_ME = 1U << 0,
	WGPEER_REPLACE_ALLOWEDIPS = 1U << 1,
	WGPEER_HAS_PRESHARED_KEY = 1U << 2,
	WGPEER_HAS_KEEPALIVE = 1U << 3,
	WGPEER_HAS_ENDPOINT = 1U << 4,
	WGPEER_UPDATE_ONLY = 1U << 5, /* change an existing peer, never create it */
};

struct wg_peer {
	uint8_t public_key[WG_KEY_LEN];
	uint8_t preshared_key[WG_KEY_LEN]; /* with WGPEER_HAS_PRESHARED_KEY; all zero = none */
	struct sockaddr_storage endpoint;  /* ss_family 0: none */
	uint16_t keepalive;		   /* seconds, 0 = off */
	size_t n_allowed_ips;
	struct ip_prefix *allowed_ips;
	unsigned int flags;
	/* read-only, filled by wg_get() */
	int64_t last_handshake_sec; /* 0 = never */
	int64_t last_handshake_nsec;
	uint64_t rx_bytes, tx_bytes;
};

enum wg_device_flags {
	WGDEVICE_HAS_PRIVATE_KEY = 1U << 0,
	WGDEVICE_HAS_PUBLIC_KEY = 1U << 1, /* read-only */
	WGDEVICE_HAS_LISTEN_PORT = 1U << 2,
	WGDEVICE_HAS_FWMARK = 1U << 3,
};

struct wg_device {
	char ifname[16];
	int ifindex; /* filled by wg_get() for the kernel backend; 0 otherwise */
	uint8_t private_key[WG_KEY_LEN];
	uint8_t public_key[WG_KEY_LEN];
	uint16_t listen_port;
	uint32_t fwmark;
	unsigned int flags;
	size_t n_peers;
	struct wg_peer *peers;
};

/*
 * NULL-safe; wipes key material (explicit_bzero) before freeing. Frees dev,
 * its peers array and each peer's allowed_ips array (all from malloc).
 */
void wg_device_free(struct wg_device *dev);
/* The same for a device not allocated on its own: frees its peers, wipes it. */
void wg_device_clear(struct wg_device *dev);

/*
 * Appends a zeroed peer to dev->peers (the array is exactly n_peers long; the
 * old copy is wiped). Returns it, or NULL when out of memory. Pointers to
 * earlier peers are invalidated.
 */
struct wg_peer *wg_device_add_peer(struct wg_device *dev);
/* Appends one allowed IP to peer. 0 or -ENOMEM. */
int wg_peer_add_allowed_ip(struct wg_peer *peer, const struct ip_prefix *prefix);

/* The longest alias wg_create() accepts (the kernel stores IFALIASZ - 1 bytes with the NUL). */
#define WG_ALIAS_MAX 254

/*
 * Creates the device marked as owned: its interface alias is set to alias
 * (the owner mark "fabricd:<cluster>", 1..WG_ALIAS_MAX bytes, else -EINVAL).
 * -EEXIST if a link of that name exists (its alias is left alone). When the
 * device was made but the alias could not be set, the device is removed
 * again and the alias error returned.
 *
 * Kernel backend: one sendmsg with two RTM_NEWLINK messages, the creating
 * one of kind "wireguard" and one setting IFLA_IFALIAS (which the kernel
 * ignores in a creating message), so no moment exists at which fabricd can
 * die and leave the device unmarked. Userspace backend: starts wireguard-go
 * for ifname in the foreground of a detached child, records its PID in
 * /var/run/wireguard/<ifname>.pid, waits (bounded, about 3 s) until the UAPI
 * socket answers, then sets the alias on its TUN link over rtnetlink; a
 * fabricd killed in between leaves an unmarked device that
 * wg_started_by_fabricd() recognises.
 */
int wg_create(enum wg_backend backend, const char *ifname, const char *alias);

/*
 * Whether the device was started by fabricd even if it carries no owner
 * mark (fabricd was killed before it set the alias). Userspace: the PID
 * file /var/run/wireguard/<ifname>.pid names a live process that is
 * exactly "wireguard-go <ifname>" in our network namespace. Kernel: always
 * false, as the kernel backend creates the device and its mark at once.
 */
bool wg_started_by_fabricd(enum wg_backend backend, const char *ifname);

/*
 * Removes the device. Userspace: stops the wireguard-go process recorded in
 * the PID file (SIGTERM, then SIGKILL after a bounded wait) and removes the
 * socket and PID files; kernel: RTM_DELLINK. -ENODEV if absent.
 */
int wg_destroy(enum wg_backend backend, const char *ifname);

/* Whether the device exists and answers for this backend. */
bool wg_exists(enum wg_backend backend, const char *ifname);

/*
 * What is particular to wireguard-go, for the engine. It closes its device
 * when its link-event netlink socket overflows (ENOBUFS), which a burst of
 * link changes in its namespace causes, and does so a moment after the
 * burst. Kernel WireGuard has none of this.
 */
/* True when link changes must be paced: at most *max_msgs per send, *pause_us between. */
bool wg_link_pacing(enum wg_backend backend, size_t *max_msgs, unsigned int *pause_us);
/* For the userspace backend's batches (nl_batch_set_throttle): until wireguard-go has read
 * the link events queued for it (ifname: its device). */
void wg_link_wait_drained(const void *ifname);
/*
 * False when the device closed under a burst of link_changes paced link
 * changes (looked at twice, 50 ms apart, unless they were too few to matter).
 */
bool wg_survived_link_burst(enum wg_backend backend, const char *ifname, size_t link_changes);
/*
 * After an apply: wireguard-go's UDP sockets get the buffers later
 * wireguard-go versions give them (Debian 12's drops packets under load
 * without). It binds new sockets whenever its listen port is set (even to
 * the same port), so every apply and daemon pass checks again; wait_ms as
 * wg_uapi_widen_udp_buffers(). Kernel WireGuard: nothing to do.
 */
void wg_tune(enum wg_backend backend, const char *ifname, unsigned int wait_ms);
/*
 * A wireguard-go that fabricd started (a fabricd killed meanwhile) may still
 * be coming up: waits (up to 3 s) until it answers on its socket or is gone.
 */
void wg_wait_started(enum wg_backend backend, const char *ifname);
/* The backend an existing device of link kind ("wireguard", "tun") runs; false if neither. */
bool wg_backend_of_link_kind(const char *kind, enum wg_backend *out);

/*
 * Reads the device and its peers into a new *out (free with wg_device_free).
 * The flags say what was read, the same for both backends: HAS_LISTEN_PORT and
 * HAS_FWMARK always (0 = unset), HAS_PRIVATE_KEY and HAS_PUBLIC_KEY when the
 * device has a key; per peer HAS_KEEPALIVE always, HAS_ENDPOINT when it has
 * one, HAS_PRESHARED_KEY when it is not all zero.
 */
int wg_get(enum wg_backend backend, const char *ifname, struct wg_device **out);

/* Applies a partial change (see the file comment). 0 or -errno. */
int wg_set(enum wg_backend backend, const struct wg_device *change);

/* Kernel error text of the last failed call, if any ("" otherwise). */
const char *wg_last_error(void);

const char *wg_backend_name(enum wg_backend backend);

/* A name the kernel accepts for a link: 1..15 bytes, no '/', ':' or space, not "." or "..". */
bool wg_ifname_valid(const char *ifname);

/* For the backends: sets the text wg_last_error() returns (printf format). */
void wg_set_last_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
