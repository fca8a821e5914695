// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/fabric.c - the WireGuard fabric device and its peers. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "kinds/fabric.h"
#include "base/log.h"
#include "definition/wgkey.h"

static const char *peer_name(const struct node_state *want, const uint8_t *key, char *buf,
			     size_t len)
{
	const struct cluster *c = want->cluster;

	for (size_t i = 0; i < c->n_nodes; i++) {
		if (!memcmp(c->nodes[i].public_key, key, WG_KEY_LEN)) {
			snprintf(buf, len, "%s", c->nodes[i].name);
			return buf;
		}
	}
	/* a peer no node has: name it by its key's start, as `wg` abbreviates */
	char b64[WGKEY_B64_LEN];

	wgkey_to_base64(b64, key);
	snprintf(buf, len, "%.8s...", b64);
	return buf;
}

static bool sockaddr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	struct ip_addr x, y;
	uint16_t px = 0, py = 0;

	if (a->ss_family != b->ss_family)
		return false;
	if (!a->ss_family)
		return true;
	if (ip_addr_from_sockaddr((const struct sockaddr *)a, &x, &px) < 0 ||
	    ip_addr_from_sockaddr((const struct sockaddr *)b, &y, &py) < 0)
		return false;
	return px == py && ip_addr_equal(&x, &y);
}

static const char *sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	struct ip_addr a;
	uint16_t port = 0;
	char ip[IP_ADDR_STRLEN];

	if (!ss->ss_family || ip_addr_from_sockaddr((const struct sockaddr *)ss, &a, &port) < 0) {
		snprintf(buf, len, "none");
		return buf;
	}
	ip_addr_str(&a, ip, sizeof(ip));
	snprintf(buf, len, a.family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
	return buf;
}

static const struct wg_peer *find_peer(const struct wg_device *dev, const uint8_t *key)
{
	for (size_t i = 0; dev && i < dev->n_peers; i++) {
		if (!memcmp(dev->peers[i].public_key, key, WG_KEY_LEN))
			return &dev->peers[i];
	}
	return NULL;
}

static struct op *peer_op(struct plan *p, enum op_verb verb, const char *name, const uint8_t *key)
{
	struct op *op = plan_add(p, OP_WG_PEER, PHASE_WG_CONFIG, verb, "peer %s", name);

	if (op) {
		snprintf(op->ifname, sizeof(op->ifname), "%s", FABRIC_IFNAME);
		memcpy(op->peer.public_key, key, WG_KEY_LEN);
	}
	return op;
}

/* The preshared key a peer should have; NULL when fabricd does not manage them. */
static const uint8_t *wanted_psk(const struct reconcile *r, const struct desired_peer *dp)
{
	return r->psk_managed && dp->node < r->n_psk ? r->psk[dp->node] : NULL;
}

static int plan_peer(const struct reconcile *r, const struct node_state *want,
		     const struct desired_peer *dp, const struct wg_peer *have, struct plan *p)
{
	const uint8_t *psk = wanted_psk(r, dp);
	const char *name = want->cluster->nodes[dp->node].name;
	char a[80], b[80], ip[IP_ADDR_STRLEN];
	struct sockaddr_storage ep = dp->endpoint;
	struct op *op;
	bool allowed_ok;

	if (!have) {
		op = peer_op(p, VERB_CREATE, name, dp->public_key);
		if (!op)
			return -ENOMEM;
		op->peer.flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_HAS_KEEPALIVE;
		if (ep.ss_family) {
			op->peer.flags |= WGPEER_HAS_ENDPOINT;
			op->peer.endpoint = ep;
		}
		op->peer.keepalive = (uint16_t)dp->keepalive;
		op->allowed_ip = dp->allowed_ip;
		op->peer.n_allowed_ips = 1;
		if (psk && !wgkey_is_zero(psk)) {
			op->peer.flags |= WGPEER_HAS_PRESHARED_KEY;
			memcpy(op->peer.preshared_key, psk, WG_KEY_LEN);
			op_detail(op, "preshared key");
		}
		op_detail(op, "endpoint %s, allowed ips %s/%u, keepalive %u",
			  sockaddr_str(&ep, a, sizeof(a)),
			  ip_addr_str(&dp->allowed_ip.addr, ip, sizeof(ip)), dp->allowed_ip.len,
			  dp->keepalive);
		return 0;
	}
	allowed_ok = have->n_allowed_ips == 1 &&
		     ip_addr_equal(&have->allowed_ips[0].addr, &dp->allowed_ip.addr) &&
		     have->allowed_ips[0].len == dp->allowed_ip.len;
	op = NULL;
	if (ep.ss_family && !sockaddr_equal(&ep, &have->endpoint) &&
	    (!r->roaming || !have->endpoint.ss_family ||
	     (dp->node < r->n_endpoint_moved && r->endpoint_moved[dp->node]))) {
		op = peer_op(p, VERB_CHANGE, name, dp->public_key);
		if (!op)
			return -ENOMEM;
		op->peer.flags |= WGPEER_HAS_ENDPOINT;
		op->peer.endpoint = ep;
		op_detail(op, "endpoint %s -> %s", sockaddr_str(&have->endpoint, a, sizeof(a)),
			  sockaddr_str(&ep, b, sizeof(b)));
	}
	if (have->keepalive != dp->keepalive) {
		if (!op && !(op = peer_op(p, VERB_CHANGE, name, dp->public_key)))
			return -ENOMEM;
		op->peer.flags |= WGPEER_HAS_KEEPALIVE;
		op->peer.keepalive = (uint16_t)dp->keepalive;
		op_detail(op, "keepalive %u -> %u", have->keepalive, dp->keepalive);
	}
	if (!allowed_ok) {
		if (!op && !(op = peer_op(p, VERB_CHANGE, name, dp->public_key)))
			return -ENOMEM;
		op->peer.flags |= WGPEER_REPLACE_ALLOWEDIPS;
		op->allowed_ip = dp->allowed_ip;
		op->peer.n_allowed_ips = 1;
		op_detail(op, "allowed ips -> %s/%u",
			  ip_addr_str(&dp->allowed_ip.addr, ip, sizeof(ip)), dp->allowed_ip.len);
	}
	if (psk && memcmp(psk, have->preshared_key, WG_KEY_LEN)) {
		if (!op && !(op = peer_op(p, VERB_CHANGE, name, dp->public_key)))
			return -ENOMEM;
		/* all zeros removes it: the peer's file is gone or empty */
		op->peer.flags |= WGPEER_HAS_PRESHARED_KEY;
		memcpy(op->peer.preshared_key, psk, WG_KEY_LEN);
		op_detail(op, wgkey_is_zero(psk) ? "preshared key removed" : "preshared key");
	}
	if (op)
		op->peer.flags |= WGPEER_UPDATE_ONLY;
	return 0;
}

static int plan_peers(const struct reconcile *r, const struct node_state *want,
		      const struct wg_device *have, struct plan *p)
{
	const struct desired_fabric *f = &want->fabric;
	char name[FABRICD_NAME_MAX + 1];
	int ret;

	for (size_t i = 0; i < f->n_peers; i++) {
		ret = plan_peer(r, want, &f->peers[i], find_peer(have, f->peers[i].public_key), p);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; have && i < have->n_peers; i++) {
		const struct wg_peer *hp = &have->peers[i];
		bool wanted = false;
		struct op *op;

		for (size_t j = 0; j < f->n_peers && !wanted; j++)
			wanted = !memcmp(f->peers[j].public_key, hp->public_key, WG_KEY_LEN);
		if (wanted)
			continue;
		op = peer_op(p, VERB_DELETE, peer_name(want, hp->public_key, name, sizeof(name)),
			     hp->public_key);
		if (!op)
			return -ENOMEM;
		op->peer.flags = WGPEER_REMOVE_ME;
	}
	return 0;
}

static int plan_device(struct reconcile *r, const struct node_state *want,
		       const struct wg_device *have, struct plan *p)
{
	bool key_ok = have && (have->flags & WGDEVICE_HAS_PUBLIC_KEY) &&
		      !memcmp(have->public_key, r->public_key, WG_KEY_LEN);
	bool port_ok = have && have->listen_port == want->fabric.listen_port;
	struct op *op;

	if (key_ok && port_ok)
		return 0;
	op = plan_add(p, OP_WG_DEVICE, PHASE_WG_CONFIG, have ? VERB_CHANGE : VERB_CREATE,
		      "fabric %s", FABRIC_IFNAME);
	if (!op)
		return -ENOMEM;
	snprintf(op->ifname, sizeof(op->ifname), "%s", FABRIC_IFNAME);
	if (!key_ok) {
		op->wg.flags |= WGDEVICE_HAS_PRIVATE_KEY;
		memcpy(op->wg.private_key, r->private_key, WG_KEY_LEN);
		op_detail(op, "private key from the key file");
	}
	if (!port_ok) {
		op->wg.flags |= WGDEVICE_HAS_LISTEN_PORT;
		op->wg.listen_port = want->fabric.listen_port;
		if (have)
			op_detail(op, "listen port %u -> %u", have->listen_port,
				  want->fabric.listen_port);
		else
			op_detail(op, "listen port %u", want->fabric.listen_port);
	}
	return 0;
}

static int plan_link(const struct node_state *want, const struct link_obs *l, bool adopt,
		     struct plan *p)
{
	struct link_change c = {0};
	struct op *op;

	if (adopt) {
		/* fabricd started it but was stopped before marking it: mark it now */
		c.mask |= LINK_SET_ALIAS;
		snprintf(c.alias, sizeof(c.alias), "%s", want->owner);
	}
	if (!l || l->mtu != want->fabric.mtu) {
		c.mask |= LINK_SET_MTU;
		c.mtu = want->fabric.mtu;
	}
	if (!l || !(l->flags & IFF_UP))
		c.mask |= LINK_SET_UP;
	if (!l) {
		/* no IPv6 link-local address: nothing may route through the tunnel by itself */
		c.mask |= LINK_SET_ALIAS | LINK_SET_NO_ADDRGEN;
		snprintf(c.alias, sizeof(c.alias), "%s", want->owner);
	}
	if (!c.mask)
		return 0;
	op = plan_add(p, OP_LINK_CHANGE, PHASE_FABRIC_LINK, l ? VERB_CHANGE : VERB_CREATE,
		      "fabric %s", FABRIC_IFNAME);
	if (!op)
		return -ENOMEM;
	snprintf(op->ifname, sizeof(op->ifname), "%s", FABRIC_IFNAME);
	op->ifindex = l ? l->ifindex : 0;
	op->change = c;
	if (!l)
		op_detail(op, "mtu %u, up", c.mtu);
	else if (c.mask & LINK_SET_MTU)
		op_detail(op, "mtu %u -> %u", l->mtu, c.mtu);
	if (adopt)
		op_detail(op, "adopted: started by fabricd, not yet marked");
	if (l && (c.mask & LINK_SET_UP))
		op_detail(op, "down -> up");
	return 0;
}

int fabric_plan(struct reconcile *r, const struct node_state *want, const struct observed *have,
		struct plan *p, struct diag *diag)
{
	const struct link_obs *l = link_find(&have->links, FABRIC_IFNAME);
	int ret;

	if (l && !link_is_owned(l, want->owner) && !have->wg_adopt) {
		diag_add(diag, "fabric " FABRIC_IFNAME,
			 "a link named %s exists that fabricd does not own (alias \"%s\"); "
			 "delete it or give it the alias \"%s\" to let fabricd adopt it",
			 FABRIC_IFNAME, l->alias, want->owner);
		return 0;
	}
	if (l && !have->wg) {
		diag_add(diag, "fabric " FABRIC_IFNAME,
			 "the device exists but its WireGuard state cannot be read with the %s "
			 "backend; run `fabricd down` and apply again",
			 wg_backend_name(r->backend));
		return 0;
	}
	if (!l) {
		struct op *op = plan_add(p, OP_WG_CREATE, PHASE_WG_CREATE, VERB_CREATE, "fabric %s",
					 FABRIC_IFNAME);

		if (!op)
			return -ENOMEM;
		snprintf(op->ifname, sizeof(op->ifname), "%s", FABRIC_IFNAME);
		op->backend = r->backend;
		op_detail(op, "WireGuard, %s backend", wg_backend_name(r->backend));
	}
	ret = plan_link(want, l, have->wg_adopt, p);
	if (!ret)
		ret = ifaddr_plan(want, l, &have->fabric_addrs, p);
	if (!ret)
		ret = plan_device(r, want, l ? have->wg : NULL, p);
	if (!ret)
		ret = plan_peers(r, want, l ? have->wg : NULL, p);
	return ret;
}
