// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/desired.c - one node's share of the cluster definition. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition/desired.h"
#include "definition/evpn.h"

void desired_vxlan_name(char out[FABRICD_IFNAME_MAX + 1], uint32_t vni, enum transport t)
{
	snprintf(out, FABRICD_IFNAME_MAX + 1, "%s%u", t == TRANSPORT_SECURE ? "vs" : "vx", vni);
}

void desired_free(struct node_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_zones; i++) {
		free(s->zones[i].underlays);
		free(s->zones[i].fabrics);
	}
	free(s->vnets);
	free(s->zones);
	free(s->fabric.peers);
	memset(s, 0, sizeof(*s));
}

void desired_allowed_ips_text(const struct desired_peer *p, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < p->n_allowed_ips && used < len; i++) {
		char ip[IP_ADDR_STRLEN];
		int n = snprintf(buf + used, len - used, "%s%s/%u", i ? ", " : "",
				 ip_addr_str(&p->allowed_ips[i].addr, ip, sizeof(ip)),
				 p->allowed_ips[i].len);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

const struct desired_vnet *desired_find_vnet(const struct node_state *s, const char *bridge)
{
	for (size_t i = 0; i < s->n_vnets; i++) {
		if (!strcmp(s->vnets[i].name, bridge))
			return &s->vnets[i];
	}
	return NULL;
}

/* Whether nodes a and b are members of one EVPN zone. */
static bool share_evpn_zone(const struct cluster *c, size_t a, size_t b)
{
	for (size_t zi = 0; zi < c->n_zones; zi++) {
		const struct zone *z = &c->zones[zi];

		if (z->control_plane == CONTROL_PLANE_EVPN && zone_has_member(z, a) &&
		    zone_has_member(z, b))
			return true;
	}
	return false;
}

static void build_peer(const struct cluster *c, size_t self, size_t idx, struct desired_peer *p)
{
	const struct node *n = &c->nodes[idx];

	memset(p, 0, sizeof(*p));
	p->node = idx;
	memcpy(p->public_key, n->public_key, WG_KEY_LEN);
	if (n->flags & NODE_HAS_ENDPOINT) {
		snprintf(p->endpoint_host, sizeof(p->endpoint_host), "%s", n->endpoint_host);
		p->endpoint_port = n->endpoint_port;
		/* a DNS name stays unresolved (family 0): engine/resolve.c fills endpoint */
		if (ip_addr_parse(n->endpoint_host, &p->endpoint_addr) < 0)
			memset(&p->endpoint_addr, 0, sizeof(p->endpoint_addr));
	} else {
		p->endpoint_addr = n->underlay;
		ip_addr_str(&n->underlay, p->endpoint_host, sizeof(p->endpoint_host));
		p->endpoint_port = node_listen_port(c, n);
	}
	if (p->endpoint_addr.family)
		ip_addr_to_sockaddr(&p->endpoint_addr, p->endpoint_port, &p->endpoint);
	p->allowed_ips[0].addr = n->fabric_address;
	p->allowed_ips[0].len = ip_addr_host_len(&n->fabric_address);
	p->n_allowed_ips = 1;
	/* an EVPN zone's VXLAN goes to the peer's underlay address, through WireGuard when secure
	 */
	if (share_evpn_zone(c, self, idx)) {
		p->allowed_ips[1].addr = n->underlay;
		p->allowed_ips[1].len = ip_addr_host_len(&n->underlay);
		p->n_allowed_ips = 2;
	}
	p->keepalive = c->fabric.keepalive;
}

static int build_fabric(const struct cluster *c, size_t self, struct node_state *s)
{
	const struct node *me = &c->nodes[self];
	struct desired_fabric *f = &s->fabric;

	snprintf(f->ifname, sizeof(f->ifname), "%s", FABRIC_IFNAME);
	f->listen_port = node_listen_port(c, me);
	f->secure_port = c->fabric.secure_port;
	f->address.addr = me->fabric_address;
	f->address.len = c->fabric.prefix.len;
	if (c->n_nodes > 1) {
		f->peers = calloc(c->n_nodes - 1, sizeof(*f->peers));
		if (!f->peers)
			return -ENOMEM;
	}
	s->wg_family = cluster_wg_family(c, me->underlay.family);
	for (size_t i = 0; i < c->n_nodes; i++) {
		struct desired_peer *p;

		if (i == self)
			continue;
		p = &f->peers[f->n_peers++];
		build_peer(c, self, i, p);
	}
	return 0;
}

static int build_vnet(const struct cluster *c, size_t self, size_t zi, size_t vi,
		      const struct desired_zone *dz, bool speaks_evpn, struct desired_vnet *v)
{
	const struct zone *z = &c->zones[zi];
	const struct node *me = &c->nodes[self];
	bool secure = z->transport == TRANSPORT_SECURE;

	memset(v, 0, sizeof(*v));
	v->zone = zi;
	v->zone_name = z->name;
	v->name = z->vnets[vi].name;
	v->vni = z->vnets[vi].vni;
	v->transport = z->transport;
	v->existing_bridge = (z->flags & ZONE_EXISTING_BRIDGES) != 0;
	v->replaces = z->vnets[vi].replaces[0] ? z->vnets[vi].replaces : NULL;
	v->mtu = dz->mtu;
	v->n_remotes = v->n_other_remotes = dz->n_peers;
	v->evpn = z->control_plane == CONTROL_PLANE_EVPN;
	v->one_device = speaks_evpn;
	if (v->evpn) {
		/*
		 * One device in both transports: zebra flaps the VNI whenever its
		 * device is replaced, and the port cannot change on a live device.
		 * Secure moves its VTEP to the fabric address and carries the VXLAN
		 * still sent to underlay addresses into WireGuard by a route
		 * (engine/switch.c). vs<VNI> is named as the other device only so
		 * that an earlier version's secure device goes.
		 */
		desired_vxlan_name(v->vxlan, v->vni, TRANSPORT_PLAIN);
		v->port = PLAIN_VXLAN_PORT;
		/* the VTEP, changed live with the transport (within one address family) */
		v->local = secure ? me->fabric_address : me->underlay;
		v->remotes = secure ? dz->fabrics : dz->underlays;
		desired_vxlan_name(v->other_vxlan, v->vni, TRANSPORT_SECURE);
		v->other_port = c->fabric.secure_port;
		v->other_local = me->fabric_address;
		/* the other transport's VTEPs: kinds/fdb.c keeps zebra's entries to them */
		v->other_remotes = secure ? dz->underlays : dz->fabrics;
		return 0;
	}
	desired_vxlan_name(v->vxlan, v->vni, z->transport);
	v->port = secure ? c->fabric.secure_port : PLAIN_VXLAN_PORT;
	v->local = secure ? me->fabric_address : me->underlay;
	v->standby = !secure && !v->one_device;
	desired_vxlan_name(v->other_vxlan, v->vni, secure ? TRANSPORT_PLAIN : TRANSPORT_SECURE);
	v->other_port = secure ? PLAIN_VXLAN_PORT : c->fabric.secure_port;
	v->other_local = secure ? me->underlay : me->fabric_address;
	v->remotes = secure ? dz->fabrics : dz->underlays;
	v->other_remotes = secure ? dz->underlays : dz->fabrics;
	return 0;
}

/* The zone's other members, in member order, as each transport reaches them. */
static int build_zone_peers(const struct cluster *c, size_t self, const struct zone *z,
			    struct desired_zone *dz)
{
	if (z->n_members < 2)
		return 0;
	dz->underlays = calloc(z->n_members - 1, sizeof(*dz->underlays));
	dz->fabrics = calloc(z->n_members - 1, sizeof(*dz->fabrics));
	if (!dz->underlays || !dz->fabrics)
		return -ENOMEM; /* desired_free frees them */
	for (size_t m = 0; m < z->n_members; m++) {
		const struct node *peer = &c->nodes[z->members[m]];

		if (z->members[m] == self)
			continue;
		dz->underlays[dz->n_peers] = peer->underlay;
		dz->fabrics[dz->n_peers++] = peer->fabric_address;
	}
	return 0;
}

/*
 * A zone's MTU against its "mtu": with fabric.underlay_mtu given, config_verify
 * has said all there is (an "mtu" above the computed one is an error there,
 * a small one a warning). Measured on this node (engine/session.c), the
 * underlay can be smaller than the file assumed: the zone gets what this
 * underlay carries (mtu_zone takes the smaller), with a warning, and the
 * node is built at MTUs that work rather than not at all.
 */
static void zone_mtu_diag(const struct cluster *c, size_t zi, const struct desired_zone *dz,
			  unsigned int underlay, struct diag *diag)
{
	const struct zone *z = &c->zones[zi];
	bool given = z->flags & ZONE_HAS_MTU;
	char path[96];

	if (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU)
		return;
	if (z->flags & ZONE_PVE_SDN) /* no definition: Proxmox's zone and its key */
		snprintf(path, sizeof(path), given ? "Proxmox zone %s, mtu" : "Proxmox zone %s",
			 z->name);
	else
		snprintf(path, sizeof(path), given ? "zones[%zu].mtu" : "zones[%zu]", zi);
	if (given && z->mtu > dz->computed_mtu)
		diag_warn(diag, path,
			  "%u is above what zone \"%s\" can carry here, %u (underlay MTU %u, "
			  "measured on the routes to the other nodes): the zone gets %u; lower "
			  "\"mtu\" or raise the underlay's MTU",
			  z->mtu, z->name, dz->computed_mtu, underlay, dz->mtu);
	/* an "mtu" below 1280 was warned about by config_verify already */
	else if (dz->mtu < MTU_IPV6_MIN && !given)
		diag_warn(diag, path,
			  "the zone MTU %u (underlay MTU %u, measured on the routes to the other "
			  "nodes) is below 1280, so guests in it cannot carry IPv6; raise the "
			  "underlay's MTU if IPv6 is needed",
			  dz->mtu, underlay);
}

/*
 * A followed Proxmox Simple zone's guests take their MTU from Proxmox (the
 * zone's "mtu", 1500 without one), not from the bridge fabricd's port
 * lowers: larger frames between nodes are dropped at that port, silently
 * (a bridge sends no ICMP). Proxmox's zone MTU is the operator's to set.
 */
static void pve_mtu_diag(const struct cluster *c, size_t zi, const struct desired_zone *dz,
			 struct diag *diag)
{
	const struct zone *z = &c->zones[zi];
	bool follows = z->flags & ZONE_PVE_FOLLOW;
	unsigned int guests = z->pve_mtu ? z->pve_mtu : 1500;
	const char *pve = follows ? z->pve_zone : z->name; /* --sdn-dir: the same name */
	char path[96];

	/* a zone "mtu" above what the zone carries is zone_mtu_diag's to say */
	if (!(z->flags & (ZONE_PVE_FOLLOW | ZONE_PVE_SDN)) || (z->flags & ZONE_HAS_MTU) ||
	    guests <= dz->mtu)
		return;
	if (follows)
		snprintf(path, sizeof(path), "zones[%zu].pve_zone", zi);
	else
		snprintf(path, sizeof(path), "Proxmox zone %s", z->name);
	/* the path names Proxmox's zone already where there is no definition (--sdn-dir) */
	diag_warn(
	    diag, path,
	    "%s%s gives its guests MTU %u%s, above the %u zone \"%s\" carries between nodes "
	    "here: their larger frames are dropped on the way, silently; set the zone's MTU to "
	    "%u in Proxmox (Datacenter > SDN > Zones > %s), Apply, and restart the guests "
	    "(they take the MTU when they start)",
	    follows ? "Proxmox zone " : "it", follows ? pve : "", guests,
	    z->pve_mtu && follows ? "" : " (no MTU set)", dz->mtu, z->name, dz->mtu, pve);
}

/*
 * An IPv6 fabric needs 1280 bytes on wgfab0: under it the kernel keeps no
 * IPv6 state on the link and refuses its address. The underlay MTU given in
 * the definition is checked by config_verify; a measured one only here.
 */
static bool fabric_too_small(const struct cluster *c, unsigned int underlay_mtu,
			     unsigned int fabric_mtu, struct diag *diag)
{
	if (c->fabric.prefix.addr.family != AF_INET6 || fabric_mtu >= MTU_IPV6_MIN ||
	    (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU))
		return false;
	diag_add(diag, "underlay MTU",
		 "%u, measured on the routes to the other nodes, leaves %s %u bytes, under the "
		 "1280 an IPv6 fabric (fabric.prefix) needs: raise the underlay links' MTU to at "
		 "least %u, or give the fabric an IPv4 prefix",
		 underlay_mtu, FABRIC_IFNAME, fabric_mtu, underlay_mtu + MTU_IPV6_MIN - fabric_mtu);
	return true;
}

static int build_zones(const struct cluster *c, size_t self, struct node_state *s,
		       struct diag *diag)
{
	size_t n_vnets = 0;
	bool speaks_evpn;
	int ret;

	s->zones = calloc(c->n_zones ? c->n_zones : 1, sizeof(*s->zones));
	if (!s->zones)
		return -ENOMEM;
	for (size_t zi = 0; zi < c->n_zones; zi++) {
		const struct zone *z = &c->zones[zi];
		struct desired_zone *dz;

		if (!zone_has_member(z, self))
			continue;
		dz = &s->zones[s->n_zones++];
		dz->zone = zi;
		if (build_zone_peers(c, self, z, dz) < 0)
			return -ENOMEM;
		if (s->mtu_known) {
			dz->mtu = mtu_zone(&s->mtu, z, &dz->computed_mtu);
			dz->secure_mtu = mtu_zone_as(&s->mtu, z, TRANSPORT_SECURE, NULL);
			zone_mtu_diag(c, zi, dz, s->mtu.underlay, diag);
			pve_mtu_diag(c, zi, dz, diag);
		}
		n_vnets += z->n_vnets;
		if (z->control_plane == CONTROL_PLANE_EVPN && z->n_vnets)
			s->carry = true;
	}
	if (n_vnets) {
		s->vnets = calloc(n_vnets, sizeof(*s->vnets));
		if (!s->vnets)
			return -ENOMEM;
	}
	speaks_evpn = evpn_node_speaks(c, self);
	for (size_t i = 0; i < s->n_zones; i++) {
		size_t zi = s->zones[i].zone;

		for (size_t vi = 0; vi < c->zones[zi].n_vnets; vi++) {
			/* counted first: desired_free frees what a failed one allocated */
			ret = build_vnet(c, self, zi, vi, &s->zones[i], speaks_evpn,
					 &s->vnets[s->n_vnets++]);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

int desired_build(const struct cluster *c, size_t self, unsigned int underlay_mtu,
		  struct node_state *out, struct diag *diag)
{
	size_t errors_before = diag->n;
	int ret;

	memset(out, 0, sizeof(*out));
	if (self >= c->n_nodes)
		return -EINVAL;
	out->cluster = c;
	out->self = self;
	snprintf(out->owner, sizeof(out->owner), "%s%s", OWNER_PREFIX, c->name);
	ret = build_fabric(c, self, out);
	if (ret < 0)
		goto fail;
	if (underlay_mtu) {
		ret = mtu_plan_compute(underlay_mtu, c->nodes[self].underlay.family, out->wg_family,
				       c->fabric.prefix.addr.family, &out->mtu);
		if (ret < 0 && (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU))
			diag_add(diag, "fabric.underlay_mtu",
				 "underlay MTU %u is too small for WireGuard and VXLAN; "
				 "use at least %u",
				 underlay_mtu, MTU_MIN);
		else if (ret < 0)
			diag_add(
			    diag, "underlay MTU",
			    "%u, measured on the routes to the other nodes, is too small for "
			    "WireGuard and VXLAN (at least %u): raise the underlay links' MTU, "
			    "or set fabric.underlay_mtu",
			    underlay_mtu, MTU_MIN);
		if (ret < 0)
			goto fail;
		if (fabric_too_small(c, underlay_mtu, out->mtu.fabric, diag)) {
			ret = -EINVAL;
			goto fail;
		}
		out->mtu_known = true;
		out->fabric.mtu = out->mtu.fabric;
	}
	ret = build_zones(c, self, out, diag);
	if (ret < 0)
		goto fail;
	if (diag->n > errors_before) {
		ret = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	desired_free(out);
	return ret < 0 ? ret : -EINVAL;
}

bool owner_mark_cluster(const char *mark, char *name, size_t size)
{
	const size_t prefix = strlen(OWNER_PREFIX);
	size_t len;

	if (strncmp(mark, OWNER_PREFIX, prefix))
		return false;
	len = strcspn(mark + prefix, " ");
	if (!len || len >= size)
		return false;
	snprintf(name, size, "%.*s", (int)len, mark + prefix);
	return name_valid(name);
}
