// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_wg_genl_live.c - the kernel WireGuard backend against the kernel: a
 * change far larger than one message (many peers, one peer with thousands
 * of allowed IPs) set with wg_set() and read back with wg_get() (a dump of
 * many NLM_F_MULTI messages, a peer's allowed IPs split across them), then
 * the changes a pass makes: preshared key removed, keepalive 0, allowed IPs
 * replaced by fewer, a peer removed, an UPDATE_ONLY change of a peer that
 * is gone. Root and a kernel with WireGuard only (the QEMU tier runs it:
 * VM_CMD=build/tests/unit/test_wg_genl_live tests/vm/run-vm-tests.sh);
 * elsewhere it skips.
 */
#define _GNU_SOURCE /* unshare */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "definition/wgkey.h"
#include "unit.h"
#include "wireguard/genl.h"
#include "wireguard/wg.h"

#define N_PEERS 300 /* with 4 allowed IPs each: some 60 KiB of dump */
#define BIG_IPS 3000

static uint8_t keys[N_PEERS][WG_KEY_LEN];

static void endpoint_of(size_t i, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)(10000 + i));
	sin->sin_addr.s_addr = htonl(0xc0000200u + (uint32_t)(i % 250) + 1); /* 192.0.2.x */
}

/* Allowed IP j of peer i: 10.i.j/32 and fd00::i:j/128 (distinct over all peers). */
static void allowed_of(size_t i, size_t j, struct ip_prefix *p)
{
	memset(p, 0, sizeof(*p));
	if (j % 2 == 0) {
		uint32_t a = htonl(0x0a000000u | (uint32_t)(i << 13) | (uint32_t)(j / 2));

		p->addr.family = AF_INET;
		memcpy(p->addr.bytes, &a, 4);
		p->len = 32;
	} else {
		p->addr.family = AF_INET6;
		p->addr.bytes[0] = 0xfd;
		p->addr.bytes[12] = (uint8_t)(i >> 8);
		p->addr.bytes[13] = (uint8_t)i;
		p->addr.bytes[14] = (uint8_t)(j >> 8);
		p->addr.bytes[15] = (uint8_t)j;
		p->len = 128;
	}
}

static size_t n_ips_of(size_t i)
{
	return i == 7 ? BIG_IPS : 4;
}

static struct wg_device *full_change(void)
{
	struct wg_device *c = calloc(1, sizeof(*c));

	snprintf(c->ifname, sizeof(c->ifname), "wgfab0");
	c->flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT | WGDEVICE_HAS_FWMARK;
	wgkey_generate(c->private_key);
	c->listen_port = 51999;
	c->fwmark = 0x42;
	for (size_t i = 0; i < N_PEERS; i++) {
		struct wg_peer *p = wg_device_add_peer(c);

		wgkey_generate(p->preshared_key); /* any 32 bytes make a public key here */
		wgkey_public(keys[i], p->preshared_key);
		memcpy(p->public_key, keys[i], WG_KEY_LEN);
		p->flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_HAS_KEEPALIVE | WGPEER_HAS_ENDPOINT;
		if (i % 3 == 0)
			p->flags |= WGPEER_HAS_PRESHARED_KEY;
		p->keepalive = (uint16_t)(i % 2 ? 25 : 0);
		endpoint_of(i, &p->endpoint);
		for (size_t j = 0; j < n_ips_of(i); j++) {
			struct ip_prefix ip;

			allowed_of(i, j, &ip);
			wg_peer_add_allowed_ip(p, &ip);
		}
	}
	return c;
}

static const struct wg_peer *find(const struct wg_device *d, const uint8_t *key)
{
	for (size_t i = 0; i < d->n_peers; i++)
		if (!memcmp(d->peers[i].public_key, key, WG_KEY_LEN))
			return &d->peers[i];
	return NULL;
}

static bool has_ip(const struct wg_peer *p, const struct ip_prefix *ip)
{
	for (size_t k = 0; k < p->n_allowed_ips; k++)
		if (p->allowed_ips[k].len == ip->len &&
		    ip_addr_equal(&p->allowed_ips[k].addr, &ip->addr))
			return true;
	return false;
}

/* have's peer i as want's: allowed IPs (any order), keepalive, endpoint, preshared key. */
static void check_peer(const char *step, const struct wg_peer *want, const struct wg_peer *have,
		       size_t i)
{
	size_t missing = 0;
	bool psk = (want->flags & WGPEER_HAS_PRESHARED_KEY) && !wgkey_is_zero(want->preshared_key);

	CHECK(have != NULL, "%s: peer %zu is there", step, i);
	if (!have)
		return;
	CHECK_INT(have->n_allowed_ips, want->n_allowed_ips, "%s: peer %zu: allowed IPs", step, i);
	for (size_t j = 0; j < want->n_allowed_ips; j++)
		missing += !has_ip(have, &want->allowed_ips[j]);
	CHECK_INT(missing, 0, "%s: peer %zu: allowed IPs not read back", step, i);
	CHECK_INT(have->keepalive, want->keepalive, "%s: peer %zu: keepalive", step, i);
	CHECK(!memcmp(&have->endpoint, &want->endpoint, sizeof(struct sockaddr_in)),
	      "%s: peer %zu: endpoint", step, i);
	CHECK_INT(!!(have->flags & WGPEER_HAS_PRESHARED_KEY), psk, "%s: peer %zu: psk", step, i);
	if (psk)
		CHECK(!memcmp(have->preshared_key, want->preshared_key, WG_KEY_LEN),
		      "%s: peer %zu: the psk's bytes", step, i);
}

/* Reads wgfab0 back; every peer of want (except skip) as set, and no other. */
static void check_device(const char *step, const struct wg_device *want, size_t skip)
{
	struct wg_device *have = NULL;
	int ret = wg_get(WG_BACKEND_KERNEL, "wgfab0", &have);

	CHECK_INT(ret, 0, "%s: get: %s", step, wg_last_error());
	if (ret < 0)
		return;
	CHECK_INT(have->n_peers, want->n_peers - (skip < want->n_peers), "%s: peers", step);
	CHECK_INT(have->listen_port, 51999, "%s: listen port", step);
	CHECK_INT(have->fwmark, 0x42, "%s: fwmark", step);
	for (size_t i = 0; i < want->n_peers; i++) {
		if (i == skip)
			CHECK(!find(have, want->peers[i].public_key), "%s: peer %zu gone", step, i);
		else
			check_peer(step, &want->peers[i], find(have, want->peers[i].public_key), i);
	}
	wg_device_free(have);
}

/* A pass's changes: psk removed (0), keepalive 0 (1), fewer allowed IPs (7), peer 2 removed. */
static void test_changes(struct wg_device *full)
{
	struct wg_device change = {.ifname = "wgfab0"};
	struct wg_peer p[4];
	struct ip_prefix one;

	memset(p, 0, sizeof(p));
	memcpy(p[0].public_key, keys[0], WG_KEY_LEN);
	p[0].flags = WGPEER_HAS_PRESHARED_KEY | WGPEER_UPDATE_ONLY; /* all zero: removed */
	memcpy(p[1].public_key, keys[1], WG_KEY_LEN);
	p[1].flags = WGPEER_HAS_KEEPALIVE | WGPEER_UPDATE_ONLY;
	memcpy(p[2].public_key, keys[7], WG_KEY_LEN);
	p[2].flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_UPDATE_ONLY;
	allowed_of(7, 5, &one);
	p[2].allowed_ips = &one;
	p[2].n_allowed_ips = 1;
	memcpy(p[3].public_key, keys[2], WG_KEY_LEN);
	p[3].flags = WGPEER_REMOVE_ME;
	change.peers = p;
	change.n_peers = 4;
	CHECK_INT(wg_set(WG_BACKEND_KERNEL, &change), 0, "changes: %s", wg_last_error());

	memset(full->peers[0].preshared_key, 0, WG_KEY_LEN);
	full->peers[1].keepalive = 0;
	full->peers[7].allowed_ips[0] = one;
	full->peers[7].n_allowed_ips = 1;
	check_device("after the changes", full, 2);

	/* UPDATE_ONLY for a peer that is gone: nothing comes back, nothing fails */
	change.peers = &p[2];
	change.n_peers = 1;
	memcpy(p[2].public_key, keys[2], WG_KEY_LEN);
	CHECK_INT(wg_set(WG_BACKEND_KERNEL, &change), 0, "update-only: %s", wg_last_error());
	check_device("update-only of a removed peer", full, 2);
}

int main(void)
{
	struct wg_device *full;
	int ret;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		unit_skip("test_wg_genl_live", "not root (a namespace of its own)");
		return unit_summary("test_wg_genl_live");
	}
	ret = wg_create(WG_BACKEND_KERNEL, "wgfab0", "fabricd:test");
	if (ret == -EPROTONOSUPPORT) {
		unit_skip("test_wg_genl_live", "this kernel has no WireGuard (the QEMU tier has)");
		return unit_summary("test_wg_genl_live");
	}
	CHECK_INT(ret, 0, "create: %s", wg_last_error());
	full = full_change();
	CHECK_INT(wg_set(WG_BACKEND_KERNEL, full), 0, "set: %s", wg_last_error());
	check_device("after the full set", full, (size_t)-1);
	/* the same change again (a re-apply): nothing doubles */
	CHECK_INT(wg_set(WG_BACKEND_KERNEL, full), 0, "set again: %s", wg_last_error());
	check_device("after the same set again", full, (size_t)-1);
	test_changes(full);
	wg_device_free(full);
	CHECK_INT(wg_destroy(WG_BACKEND_KERNEL, "wgfab0"), 0, "destroy: %s", wg_last_error());
	return unit_summary("test_wg_genl_live");
}
