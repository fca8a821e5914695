// SPDX-License-Identifier: GPL-2.0-or-later
/* wireguard/wg.c - the WireGuard device model and the dispatch to the kernel or userspace backend.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "wireguard/wg.h"
#include "wireguard/genl.h"
#include "wireguard/uapi.h"

/* The one global: the text of the last failure, for messages at the command edge. */
static char last_error[512];

void wg_set_last_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

const char *wg_last_error(void)
{
	return last_error;
}

const char *wg_backend_name(enum wg_backend backend)
{
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return "kernel";
	case WG_BACKEND_USERSPACE:
		return "userspace";
	}
	return "unknown";
}

bool wg_ifname_valid(const char *ifname)
{
	size_t len;

	if (!ifname)
		return false;
	len = strlen(ifname);
	if (!len || len >= 16 || !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return false;
	/* the userspace backend builds file names from it: '/' must never pass */
	for (const char *c = ifname; *c; c++) {
		if (*c == '/' || *c == ':' || *c == ' ' || (*c >= '\t' && *c <= '\r'))
			return false;
	}
	return true;
}

void wg_device_clear(struct wg_device *dev)
{
	for (size_t i = 0; i < dev->n_peers; i++)
		free(dev->peers[i].allowed_ips);
	if (dev->peers)
		explicit_bzero(dev->peers, dev->n_peers * sizeof(*dev->peers));
	free(dev->peers);
	explicit_bzero(dev, sizeof(*dev));
}

void wg_device_free(struct wg_device *dev)
{
	if (!dev)
		return;
	wg_device_clear(dev);
	free(dev);
}

struct wg_peer *wg_device_add_peer(struct wg_device *dev)
{
	struct wg_peer *grown = malloc((dev->n_peers + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	/* not realloc: the old array holds preshared keys and must be wiped */
	if (dev->n_peers) {
		memcpy(grown, dev->peers, dev->n_peers * sizeof(*grown));
		explicit_bzero(dev->peers, dev->n_peers * sizeof(*grown));
	}
	free(dev->peers);
	dev->peers = grown;
	memset(&grown[dev->n_peers], 0, sizeof(*grown));
	return &grown[dev->n_peers++];
}

int wg_peer_add_allowed_ip(struct wg_peer *peer, const struct ip_prefix *prefix)
{
	struct ip_prefix *grown;

	grown = realloc(peer->allowed_ips, (peer->n_allowed_ips + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	peer->allowed_ips = grown;
	grown[peer->n_allowed_ips++] = *prefix;
	return 0;
}

static char *key_hint(const uint8_t key[WG_KEY_LEN], char *buf, size_t len)
{
	/* public keys are not secret; the first bytes are enough to find the peer */
	snprintf(buf, len, "%02x%02x%02x%02x...", key[0], key[1], key[2], key[3]);
	return buf;
}

/* Checks what the backends would otherwise reject half way through a change. */
static int check_change(const struct wg_device *c)
{
	char hint[16];

	if (!wg_ifname_valid(c->ifname)) {
		wg_set_last_error("\"%.16s\" is not a valid interface name", c->ifname);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->n_peers; i++) {
		const struct wg_peer *p = &c->peers[i];
		int family = p->endpoint.ss_family;

		if ((p->flags & WGPEER_HAS_ENDPOINT) && family != AF_INET && family != AF_INET6) {
			wg_set_last_error("%s: peer %s: endpoint is neither IPv4 nor IPv6",
					  c->ifname, key_hint(p->public_key, hint, sizeof(hint)));
			return -EINVAL;
		}
		if (p->n_allowed_ips && !p->allowed_ips)
			return -EINVAL;
		for (size_t j = 0; j < p->n_allowed_ips; j++) {
			const struct ip_prefix *ip = &p->allowed_ips[j];

			if (!ip_addr_len(&ip->addr) || ip->len > ip_addr_host_len(&ip->addr)) {
				wg_set_last_error(
				    "%s: peer %s: allowed IP %zu is not a valid prefix", c->ifname,
				    key_hint(p->public_key, hint, sizeof(hint)), j);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int bad_name(const char *ifname)
{
	wg_set_last_error("\"%.16s\" is not a valid interface name", ifname ? ifname : "");
	return -EINVAL;
}

int wg_create(enum wg_backend backend, const char *ifname, const char *alias)
{
	last_error[0] = '\0';
	if (!wg_ifname_valid(ifname))
		return bad_name(ifname);
	if (!alias || !*alias || strlen(alias) > WG_ALIAS_MAX) {
		wg_set_last_error("%s: the owner mark must be 1 to %d bytes long", ifname,
				  WG_ALIAS_MAX);
		return -EINVAL;
	}
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return wg_genl_create(ifname, alias);
	case WG_BACKEND_USERSPACE:
		return wg_uapi_create(ifname, alias);
	}
	return -EINVAL;
}

bool wg_started_by_fabricd(enum wg_backend backend, const char *ifname)
{
	if (!wg_ifname_valid(ifname))
		return false;
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return false;
	case WG_BACKEND_USERSPACE:
		return wg_uapi_started_by_fabricd(ifname);
	}
	return false;
}

int wg_destroy(enum wg_backend backend, const char *ifname)
{
	last_error[0] = '\0';
	if (!wg_ifname_valid(ifname))
		return bad_name(ifname);
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return wg_genl_destroy(ifname);
	case WG_BACKEND_USERSPACE:
		return wg_uapi_destroy(ifname);
	}
	return -EINVAL;
}

bool wg_exists(enum wg_backend backend, const char *ifname)
{
	last_error[0] = '\0';
	if (!wg_ifname_valid(ifname))
		return false;
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return wg_genl_exists(ifname);
	case WG_BACKEND_USERSPACE:
		return wg_uapi_exists(ifname);
	}
	return false;
}

int wg_get(enum wg_backend backend, const char *ifname, struct wg_device **out)
{
	last_error[0] = '\0';
	*out = NULL;
	if (!wg_ifname_valid(ifname))
		return bad_name(ifname);
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return wg_genl_get(ifname, out);
	case WG_BACKEND_USERSPACE:
		return wg_uapi_get(ifname, out);
	}
	return -EINVAL;
}

int wg_set(enum wg_backend backend, const struct wg_device *change)
{
	int ret;

	last_error[0] = '\0';
	ret = check_change(change);
	if (ret < 0)
		return ret;
	switch (backend) {
	case WG_BACKEND_KERNEL:
		return wg_genl_set(change);
	case WG_BACKEND_USERSPACE:
		return wg_uapi_set(change);
	}
	return -EINVAL;
}

void wg_tune(enum wg_backend backend, const char *ifname, unsigned int wait_ms)
{
	int n;

	if (backend != WG_BACKEND_USERSPACE || !wg_ifname_valid(ifname))
		return;
	n = wg_uapi_widen_udp_buffers(ifname, wait_ms);
	if (n > 0)
		log_debug("fabric %s: wireguard-go's UDP sockets (%d) given 7 MiB buffers", ifname,
			  n);
}

/* Measured with wireguard-go 0.0.20220316: see README, Notes and deviations. */
#define USERSPACE_PACE_MSGS 8
#define USERSPACE_PACE_US   2000
#define USERSPACE_SETTLE_US 50000
/*
 * Up to this many paced link changes never overflowed it: the drain wait
 * between batches keeps at most two batches' events queued (about 20 of
 * the some 50 a default 208 KiB socket buffer holds). One vnet is 11.
 */
#define USERSPACE_QUIET_MSGS 24
/* as long as fabricd itself waits for a wireguard-go it starts (uapi_proc.c) */
#define USERSPACE_START_WAIT_STEPS 150
#define USERSPACE_START_WAIT_US	   20000

bool wg_link_pacing(enum wg_backend backend, size_t *max_msgs, unsigned int *pause_us)
{
	if (backend != WG_BACKEND_USERSPACE)
		return false;
	*max_msgs = USERSPACE_PACE_MSGS;
	*pause_us = USERSPACE_PACE_US;
	return true;
}

void wg_link_wait_drained(const void *ifname)
{
	wg_uapi_wait_drained(ifname);
}

bool wg_survived_link_burst(enum wg_backend backend, const char *ifname, size_t link_changes)
{
	if (backend != WG_BACKEND_USERSPACE)
		return true;
	/* one that does not answer (stopped, hung) is there: wg_hung.h is about it */
	if (wg_uapi_unanswered())
		return if_nametoindex(ifname) != 0;
	if (!wg_exists(backend, ifname))
		return wg_uapi_unanswered();
	if (link_changes <= USERSPACE_QUIET_MSGS)
		return true; /* too few to overflow it: no need to wait for it to close */
	usleep(USERSPACE_SETTLE_US);
	return wg_exists(backend, ifname) || wg_uapi_unanswered();
}

void wg_wait_started(enum wg_backend backend, const char *ifname)
{
	if (backend != WG_BACKEND_USERSPACE || !wg_started_by_fabricd(backend, ifname))
		return;
	/*
	 * wireguard-go makes its TUN link first and opens its socket after: the
	 * link alone does not mean it answers. Stop waiting when it died.
	 */
	for (int i = 0; i < USERSPACE_START_WAIT_STEPS; i++) {
		if (if_nametoindex(ifname) && wg_uapi_exists(ifname))
			return;
		if (!wg_uapi_started_by_fabricd(ifname))
			return;
		usleep(USERSPACE_START_WAIT_US);
	}
}

bool wg_backend_of_link_kind(const char *kind, enum wg_backend *out)
{
	if (!strcmp(kind, "wireguard"))
		*out = WG_BACKEND_KERNEL;
	else if (!strcmp(kind, "tun"))
		*out = WG_BACKEND_USERSPACE;
	else
		return false;
	return true;
}
