// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/fabric.c - the WireGuard fabric device and its peers. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/fabric.h"
#include "kinds/kind.h"
#include "base/log.h"
#include "definition/wgkey.h"

/* The name of the node whose key this is; NULL when no node has it. */
static const char *peer_name(const struct node_state *want, const uint8_t *key)
{
	const struct cluster *c = want->cluster;

	for (size_t i = 0; i < c->n_nodes; i++) {
		if (!memcmp(c->nodes[i].public_key, key, WG_KEY_LEN))
			return c->nodes[i].name;
	}
	return NULL;
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

/* want: the desired peer (NULL: removed); have: the kernel's (NULL: new). */
static struct op *peer_op(struct plan *p, enum op_verb verb, const char *name,
			  const struct desired_peer *want, const struct wg_peer *have)
{
	struct op *op = plan_add(p, KIND_FABRIC, OP_WG_PEER, PHASE_WG_CONFIG, verb, FABRIC_IFNAME);

	if (op) {
		op->u.peer.want = want;
		op->u.peer.have = have;
		op->u.peer.name = name;
	}
	return op;
}

/*
 * The preshared key a peer should have; NULL when fabricd does not manage
 * them (status). Without --psk-dir (no keys: n_psk 0) it is none, all zeros:
 * a key left from an apply with --psk-dir would outlive the option until a
 * reboot made the device anew, and only then, on one side, break the pair.
 */
static const uint8_t *wanted_psk(const struct reconcile *r, const struct desired_peer *dp)
{
	static const uint8_t none[WG_KEY_LEN];

	if (!r->psk_managed)
		return NULL;
	return dp->node < r->n_psk ? r->psk[dp->node] : none;
}

/* The same prefixes, in any order (the kernel lists them in its trie's). */
static bool allowed_ips_equal(const struct desired_peer *dp, const struct wg_peer *have)
{
	if (have->n_allowed_ips != dp->n_allowed_ips)
		return false;
	for (size_t i = 0; i < dp->n_allowed_ips; i++) {
		bool found = false;

		for (size_t j = 0; !found && j < have->n_allowed_ips; j++)
			found =
			    ip_addr_equal(&have->allowed_ips[j].addr, &dp->allowed_ips[i].addr) &&
			    have->allowed_ips[j].len == dp->allowed_ips[i].len;
		if (!found)
			return false;
	}
	return true;
}

static int plan_peer(const struct reconcile *r, const struct node_state *want,
		     const struct desired_peer *dp, const struct wg_peer *have, struct plan *p)
{
	const uint8_t *psk = wanted_psk(r, dp);
	const char *name = want->cluster->nodes[dp->node].name;
	char a[80], b[80], ips[2 * (IP_ADDR_STRLEN + 6)];
	struct sockaddr_storage ep = dp->endpoint;
	struct op *op;
	bool allowed_ok;

	desired_allowed_ips_text(dp, ips, sizeof(ips));
	if (!have) {
		op = peer_op(p, VERB_CREATE, name, dp, NULL);
		if (!op)
			return -ENOMEM;
		op->u.peer.flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_HAS_KEEPALIVE;
		if (ep.ss_family)
			op->u.peer.flags |= WGPEER_HAS_ENDPOINT;
		if (psk && !wgkey_is_zero(psk)) {
			op->u.peer.flags |= WGPEER_HAS_PRESHARED_KEY;
			op->u.peer.psk = psk;
			op_detail(op, "preshared key");
		}
		op_detail(op, "endpoint %s, allowed ips %s, keepalive %u",
			  sockaddr_str(&ep, a, sizeof(a)), ips, dp->keepalive);
		return 0;
	}
	allowed_ok = allowed_ips_equal(dp, have);
	op = NULL;
	if (ep.ss_family && !sockaddr_equal(&ep, &have->endpoint) &&
	    (!r->roaming || !have->endpoint.ss_family ||
	     (dp->node < r->n_endpoint_moved && r->endpoint_moved[dp->node]))) {
		op = peer_op(p, VERB_CHANGE, name, dp, have);
		if (!op)
			return -ENOMEM;
		op->u.peer.flags |= WGPEER_HAS_ENDPOINT;
		op_detail(op, "endpoint %s -> %s", sockaddr_str(&have->endpoint, a, sizeof(a)),
			  sockaddr_str(&ep, b, sizeof(b)));
	}
	if (have->keepalive != dp->keepalive) {
		if (!op && !(op = peer_op(p, VERB_CHANGE, name, dp, have)))
			return -ENOMEM;
		op->u.peer.flags |= WGPEER_HAS_KEEPALIVE;
		op_detail(op, "keepalive %u -> %u", have->keepalive, dp->keepalive);
	}
	if (!allowed_ok) {
		if (!op && !(op = peer_op(p, VERB_CHANGE, name, dp, have)))
			return -ENOMEM;
		op->u.peer.flags |= WGPEER_REPLACE_ALLOWEDIPS;
		op_detail(op, "allowed ips -> %s", ips);
	}
	if (psk && memcmp(psk, have->preshared_key, WG_KEY_LEN)) {
		if (!op && !(op = peer_op(p, VERB_CHANGE, name, dp, have)))
			return -ENOMEM;
		/* all zeros removes it: the peer's file is gone or empty */
		op->u.peer.flags |= WGPEER_HAS_PRESHARED_KEY;
		op->u.peer.psk = psk;
		op_detail(op, !wgkey_is_zero(psk) ? "preshared key"
			      : r->n_psk	  ? "preshared key removed"
						  : "preshared key removed (no --psk-dir)");
	}
	if (op)
		op->u.peer.flags |= WGPEER_UPDATE_ONLY;
	return 0;
}

static int plan_peers(const struct reconcile *r, const struct node_state *want,
		      const struct wg_device *have, struct plan *p)
{
	const struct desired_fabric *f = &want->fabric;
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
		op = peer_op(p, VERB_DELETE, peer_name(want, hp->public_key), NULL, hp);
		if (!op)
			return -ENOMEM;
		op->u.peer.flags = WGPEER_REMOVE_ME;
	}
	return 0;
}

static int plan_device(const struct reconcile *r, const struct node_state *want,
		       const struct wg_device *have, struct plan *p)
{
	bool key_ok = have && (have->flags & WGDEVICE_HAS_PUBLIC_KEY) &&
		      !memcmp(have->public_key, r->public_key, WG_KEY_LEN);
	bool port_ok = have && have->listen_port == want->fabric.listen_port;
	struct op *op;

	if (key_ok && port_ok)
		return 0;
	/*
	 * WireGuard leaves the port the secure VXLAN devices now want (secure_port
	 * moved onto the old listen_port in one edit): it moves right after the
	 * guard, before they are made (EADDRINUSE on every pass otherwise).
	 */
	op = plan_add(p, KIND_FABRIC, OP_WG_DEVICE,
		      have && !port_ok && have->listen_port == want->fabric.secure_port
			  ? PHASE_GUARD
			  : PHASE_WG_CONFIG,
		      have ? VERB_CHANGE : VERB_CREATE, FABRIC_IFNAME);
	if (!op)
		return -ENOMEM;
	if (!key_ok) {
		/* the key itself stays in struct reconcile: fabric_device_of takes it from there */
		op->u.dev.flags |= WGDEVICE_HAS_PRIVATE_KEY;
		op_detail(op, "private key from the key file");
	}
	if (!port_ok) {
		op->u.dev.flags |= WGDEVICE_HAS_LISTEN_PORT;
		op->u.dev.listen_port = want->fabric.listen_port;
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
	struct op_link c = {0};
	struct op *op;

	if (adopt) {
		/* fabricd started it but was stopped before marking it: mark it now */
		c.mask |= LINK_SET_ALIAS;
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
	} else if (link_addrgen_again(l, want->fabric.mtu)) {
		c.mask |= LINK_SET_NO_ADDRGEN; /* its IPv6 state made anew (kinds/link.h) */
	}
	if (!c.mask)
		return 0;
	op = plan_add(p, KIND_FABRIC, OP_LINK_CHANGE, PHASE_FABRIC_LINK,
		      l ? VERB_CHANGE : VERB_CREATE, FABRIC_IFNAME);
	if (!op)
		return -ENOMEM;
	op->ifindex = l ? l->ifindex : 0;
	op->u.link = c;
	if ((c.mask & LINK_SET_ALIAS) && !(op->text = strdup(want->owner)))
		return -ENOMEM;
	if (!l)
		op_detail(op, "mtu %u, up", c.mtu);
	else if (c.mask & LINK_SET_MTU)
		op_detail(op, "mtu %u -> %u", l->mtu, c.mtu);
	if (adopt)
		op_detail(op, "adopted: started by fabricd, not yet marked");
	if (l && (c.mask & LINK_SET_UP))
		op_detail(op, "down -> up");
	if (l && (c.mask & LINK_SET_NO_ADDRGEN))
		op_detail(op, LINK_ADDRGEN_TEXT);
	return 0;
}

bool fabric_link_is_wireguard(const struct link_obs *l)
{
	return !strcmp(l->kind, "wireguard") || !strcmp(l->kind, "tun");
}

const struct link_obs *fabric_renamed(const struct observed *have, const char *owner)
{
	if (link_find(&have->links, FABRIC_IFNAME))
		return NULL;
	for (size_t i = 0; i < have->n_renamed; i++) {
		const struct link_obs *l = link_by_index(&have->links, have->renamed[i].ifindex);

		if (!strcmp(have->renamed[i].from, FABRIC_IFNAME) && l && link_is_owned(l, owner) &&
		    fabric_link_is_wireguard(l))
			return l;
	}
	return NULL;
}

/* Its name back; its address, settings and peers are read under it by the next pass. */
static int plan_name_back(const struct link_obs *l, struct plan *p)
{
	struct op *op =
	    plan_add(p, KIND_FABRIC, OP_LINK_CHANGE, PHASE_FABRIC_LINK, VERB_CHANGE, FABRIC_IFNAME);

	if (!op)
		return -ENOMEM;
	op->ifindex = l->ifindex;
	/* the kernel renames a link that is down: it comes up again */
	op->u.link.mask = LINK_SET_NAME | LINK_SET_UP;
	op_detail(op, "renamed %s by hand: its name back, its peers and sessions kept", l->name);
	return 0;
}

/* in: r (backend, keys, roaming), want, have (links, fabric_addrs, wg), diag. */
static int fabric_plan(const struct kind_input *in, struct plan *p)
{
	const struct reconcile *r = in->r;
	const struct node_state *want = in->want;
	const struct observed *have = in->have;
	const struct link_obs *l = link_find(&have->links, FABRIC_IFNAME), *renamed;
	struct kind_input addr = *in;
	int ret;

	if (l && !link_is_owned(l, want->owner) && !have->wg_adopt) {
		char fix[160];

		if (fabric_link_is_wireguard(l))
			snprintf(fix, sizeof(fix),
				 "delete it, or give it the alias \"%s\" to let fabricd adopt it",
				 want->owner);
		else
			snprintf(fix, sizeof(fix),
				 "delete or rename it: only a WireGuard device can be the fabric");
		diag_add(in->diag, "fabric " FABRIC_IFNAME,
			 "a link named %s exists that fabricd does not own (kind %s, alias "
			 "\"%s\"); %s",
			 FABRIC_IFNAME, l->kind[0] ? l->kind : "unknown", link_alias(l), fix);
		return 0;
	}
	if (l && !fabric_link_is_wireguard(l)) {
		/* adopted by its alias, but no WireGuard device: made again, not read */
		diag_add(in->diag, "fabric " FABRIC_IFNAME,
			 "a %s link has the name and fabricd's alias, but only a WireGuard device "
			 "can be the fabric: delete it (ip link delete %s) and apply again",
			 l->kind[0] ? l->kind : "non-WireGuard", FABRIC_IFNAME);
		return 0;
	}
	if (l && !have->wg && !r->wg_unread_ok) {
		diag_add(
		    in->diag, "fabric " FABRIC_IFNAME,
		    "the device exists but its WireGuard state cannot be read with the %s "
		    "backend%s; if it stays so, %s",
		    wg_backend_name(r->backend),
		    r->backend == WG_BACKEND_USERSPACE
			? " (its wireguard-go does not answer on /var/run/wireguard/" FABRIC_IFNAME
			  ".sock: stopped, or hung?)"
			: "",
		    r->backend == WG_BACKEND_USERSPACE
			? "end that wireguard-go (fabricd makes the device again)"
			: "run `fabricd down` and apply again");
		return 0;
	}
	if (!l && (renamed = fabric_renamed(have, want->owner)))
		return plan_name_back(renamed, p);
	if (!l) {
		struct op *op = plan_add(p, KIND_FABRIC, OP_WG_CREATE, PHASE_WG_CREATE, VERB_CREATE,
					 FABRIC_IFNAME);

		if (!op)
			return -ENOMEM;
		op->u.backend = r->backend;
		op_detail(op, "WireGuard, %s backend", wg_backend_name(r->backend));
	}
	addr.link = l;
	ret = plan_link(want, l, have->wg_adopt, p);
	if (!ret)
		ret = ifaddr_kind.plan(&addr, p);
	if (l && !have->wg)
		return ret; /* unread (wg_unread_ok): its settings and peers wait */
	if (!ret)
		ret = plan_device(r, want, l ? have->wg : NULL, p);
	if (!ret)
		ret = plan_peers(r, want, l ? have->wg : NULL, p);
	return ret;
}

void fabric_peer_of(const struct op *op, struct wg_peer *out)
{
	const struct desired_peer *w = op->u.peer.want;
	unsigned int flags = op->u.peer.flags;

	memset(out, 0, sizeof(*out));
	out->flags = flags;
	memcpy(out->public_key, w ? w->public_key : op->u.peer.have->public_key, WG_KEY_LEN);
	if (w && (flags & WGPEER_HAS_ENDPOINT))
		out->endpoint = w->endpoint;
	if (w && (flags & WGPEER_HAS_KEEPALIVE))
		out->keepalive = (uint16_t)w->keepalive;
	if (w && (flags & WGPEER_REPLACE_ALLOWEDIPS)) {
		out->n_allowed_ips = w->n_allowed_ips;
		out->allowed_ips = (struct ip_prefix *)w->allowed_ips;
	}
	if ((flags & WGPEER_HAS_PRESHARED_KEY) && op->u.peer.psk)
		memcpy(out->preshared_key, op->u.peer.psk, WG_KEY_LEN);
}

void fabric_device_of(const struct op *op, const uint8_t *private_key, struct wg_device *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->ifname, sizeof(out->ifname), "%s", op->ifname);
	out->flags = op->u.dev.flags;
	out->listen_port = op->u.dev.listen_port;
	if (out->flags & WGDEVICE_HAS_PRIVATE_KEY)
		memcpy(out->private_key, private_key, WG_KEY_LEN);
}

/* Its link change goes as every link's; the WireGuard ops go to the backend (engine/apply.c). */
static int fabric_encode(struct kind_encoder *e, struct op *op)
{
	return op->type == OP_LINK_CHANGE ? link_encode(e, op) : -EINVAL;
}

/* Every fabric op is one of a handful a pass: its detail is in op.note. */
static void fabric_describe(const struct op *op, char *buf, size_t len)
{
	(void)op;
	if (len)
		buf[0] = '\0';
}

/* The fabric device is read by its WireGuard backend (engine/observe.c), not by parse. */
const struct kind fabric_kind = {.name = "fabric",
				 .noun = "fabric",
				 .parse = NULL,
				 .plan = fabric_plan,
				 .encode = fabric_encode,
				 .describe = fabric_describe};
