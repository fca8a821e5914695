/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/desired.h - one node's share of the cluster definition: the objects it
 * should have (fabric device and peers, per vnet a VXLAN device, its FDB
 * remotes and a bridge), with their MTUs. Pure: no kernel access. This is
 * what `render` prints and what the planner diffs against the kernel.
 */
#ifndef FABRICD_DESIRED_H
#define FABRICD_DESIRED_H

#include <stdbool.h>
#include <sys/socket.h>

#include "base/diag.h"
#include "definition/model.h"
#include "definition/mtu.h"

#define FABRIC_IFNAME	 "wgfab0"
#define PLAIN_VXLAN_PORT 4789
#define OWNER_PREFIX	 "fabricd:"

struct desired_peer {
	size_t node; /* index into cluster.nodes */
	uint8_t public_key[WG_KEY_LEN];
	/* endpoint: an IP literal (endpoint_addr set) or a DNS name resolved at apply time */
	char endpoint_host[FABRICD_HOST_MAX + 1];
	struct ip_addr endpoint_addr; /* family 0 while unresolved */
	uint16_t endpoint_port;
	/* the address WireGuard gets: the literal, or the name as engine/resolve.c resolved it
	 * before planning; family 0 when unknown */
	struct sockaddr_storage endpoint;
	/*
	 * [0]: the peer's fabric address; [1] when it shares an EVPN zone with this
	 * node: its underlay address, for that zone's VXLAN carried into
	 * WireGuard (kinds/carry.c). Host lengths.
	 */
	struct ip_prefix allowed_ips[2];
	size_t n_allowed_ips;
	unsigned int keepalive;
};

struct desired_fabric {
	char ifname[FABRICD_IFNAME_MAX + 1];
	uint16_t listen_port;
	uint16_t secure_port;	  /* fabric.secure_port: the secure VXLAN devices' */
	unsigned int mtu;	  /* 0 while the underlay MTU is unknown */
	struct ip_prefix address; /* own fabric address with the prefix length */
	size_t n_peers;
	struct desired_peer *peers;
};

struct desired_vnet {
	size_t zone;	       /* index into cluster.zones */
	const char *zone_name; /* borrowed from the cluster */
	const char *name;      /* the bridge: borrowed from the cluster */
	uint32_t vni;
	enum transport transport;
	/* vx<VNI> or vs<VNI>; an EVPN vnet's is vx<VNI> in both transports (engine/switch.c) */
	char vxlan[FABRICD_IFNAME_MAX + 1];
	uint16_t port;
	struct ip_addr local;
	unsigned int mtu;	     /* zone MTU, 0 while unknown */
	unsigned int mtu_after_hold; /* the zone MTU once secure stops sending (engine/switch.c) */
	/*
	 * EVPN zone: FRR's zebra installs the flood list and MACs, the device does
	 * not learn; remotes then lists the members for the guard, not FDB entries.
	 */
	bool evpn;
	size_t n_remotes;
	/* other members' underlay (plain) or fabric (secure) addresses: the zone's (borrowed) */
	const struct ip_addr *remotes;
	/*
	 * The other transport's device (engine/switch.c): a plain vnet keeps its
	 * secure device as a mute standby that receives (standby set; not EVPN),
	 * so a node that switches to secure first can send only secure; a secure
	 * vnet's plain device is the one it left, receiving during its grace period.
	 */
	bool standby;
	/*
	 * The node runs EVPN: FRR 8.4's zebra (advertise-all-vni takes every
	 * VXLAN device) aborts when a VNI has two devices, so here a static vnet
	 * has no standby, and a switch of its zone replaces its device (the old
	 * one goes first) instead of staging both (engine/switch.c).
	 */
	bool one_device;
	char other_vxlan[FABRICD_IFNAME_MAX + 1]; /* vs<VNI> or vx<VNI> */
	uint16_t other_port;
	struct ip_addr other_local;
	size_t n_other_remotes;
	const struct ip_addr *other_remotes; /* the same members in the other transport */
	/*
	 * Not from the definition but from the kernel (engine/switch.c), for the
	 * guard: the vnet moved to secure and its plain device still receives in
	 * its grace period (members' plain VXLAN is still accepted), and whether
	 * that device could still send until this pass mutes it.
	 */
	bool plain_receiving;
	bool plain_sending;
	/*
	 * A plain vnet whose secure device still sends, in the hold after its
	 * switch back to plain (engine/switch.c): its frames still go through
	 * WireGuard, which the data-path probe says (daemon/monitor.c).
	 */
	bool secure_holding;
	/*
	 * EVPN vnet, also from the kernel (engine/switch.c): the guard marks its
	 * VXLAN into WireGuard this pass (a secure vnet, or a plain one that
	 * keeps carrying until its grace period ends).
	 */
	bool carried;
	/* the bridge is not fabricd's (zone "bridges": "existing"): only its port is */
	bool existing_bridge;
	const char *replaces; /* a foreign VXLAN port to take over (borrowed), or NULL */
};

struct desired_zone {
	size_t zone;
	unsigned int mtu;	   /* 0 while unknown */
	unsigned int computed_mtu; /* before a zone "mtu" override */
	/*
	 * The MTU the zone would have were it secure: a plain zone's vnets keep
	 * it while secure still sends for them (engine/switch.c, the hold after
	 * a switch back to plain); under mtu_policy max the plain one is larger.
	 */
	unsigned int secure_mtu;
	/*
	 * The other members' underlay and fabric addresses, once per zone: its
	 * vnets' remotes and other_remotes point here (1024 vnets of 64 nodes
	 * would copy the same 63 addresses twice each).
	 */
	size_t n_peers;
	struct ip_addr *underlays, *fabrics;
};

struct node_state {
	const struct cluster *cluster;
	size_t self;
	char owner[FABRICD_NAME_MAX + sizeof(OWNER_PREFIX)]; /* the alias marking owned links */
	bool mtu_known;
	struct mtu_plan mtu;
	int wg_family; /* family whose WireGuard overhead applies */
	struct desired_fabric fabric;
	/* an EVPN vnet is here: the carry route into WireGuard is kept (kinds/carry.c) */
	bool carry;
	size_t n_zones; /* zones this node is a member of */
	struct desired_zone *zones;
	size_t n_vnets;
	struct desired_vnet *vnets;
};

/*
 * Builds node self's state. underlay_mtu: the fabric's value when given,
 * else what the kernel reported (0 = not known yet: MTUs stay 0). Problems
 * that only show with a known MTU (a zone override above the computed MTU)
 * go to diag. 0 or -EINVAL/-ENOMEM.
 */
int desired_build(const struct cluster *c, size_t self, unsigned int underlay_mtu,
		  struct node_state *out, struct diag *diag);
void desired_free(struct node_state *s);
/*
 * The cluster a fabricd mark names ("fabricd:NAME", a link's alias, or
 * "fabricd:NAME HASH", the guard's comment: a space ends it, as ownership
 * reads it) into name; false when mark is none or NAME no valid name.
 */
bool owner_mark_cluster(const char *mark, char *name, size_t size);

/* The VXLAN device name of a VNI in a transport: vx<VNI> or vs<VNI>. */
void desired_vxlan_name(char out[FABRICD_IFNAME_MAX + 1], uint32_t vni, enum transport t);

/* The peer's allowed IPs for people: "10.255.0.2/32" or "10.255.0.2/32, 192.0.2.2/32". */
void desired_allowed_ips_text(const struct desired_peer *p, char *buf, size_t len);

const struct desired_vnet *desired_find_vnet(const struct node_state *s, const char *bridge);

#endif
