/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/model.h - the cluster definition as plain C structs.
 *
 * This is the contract between the loader (definition/config.c, the only code that sees
 * JSON) and everything downstream (desired-state builder, planner, kernel
 * layer). Optional fields carry a HAS_* bit so "not given" is never confused
 * with zero.
 *
 *   cluster
 *   +- fabric            prefix, ports, keepalive, underlay MTU
 *   +- nodes[]           name, underlay, fabric address, public key, endpoint
 *   +- zones[]           transport, MTU policy, members (indices into nodes[]),
 *      |                 the Proxmox Simple zone it follows (pve_zone)
 *      +- vnets[]        name (= bridge name), VNI
 */
#ifndef FABRICD_MODEL_H
#define FABRICD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"

#define FABRICD_NAME_MAX   63 /* node, zone and cluster names */
#define FABRICD_IFNAME_MAX 15 /* IFNAMSIZ - 1: vnet names become bridge names */
#define FABRICD_HOST_MAX   253
#define WG_KEY_LEN	   32

enum transport {
	TRANSPORT_PLAIN,
	TRANSPORT_SECURE,
};

enum mtu_policy {
	MTU_POLICY_STABLE,
	MTU_POLICY_MAX,
};

enum fabric_flags {
	FABRIC_HAS_UNDERLAY_MTU = 1U << 0,
	FABRIC_HAS_EVPN = 1U << 1,
};

/* Who programs a zone's flood lists and MACs: fabricd (static) or FRR's BGP EVPN. */
enum control_plane {
	CONTROL_PLANE_STATIC,
	CONTROL_PLANE_EVPN,
};

/* fabric.evpn: the BGP side of the EVPN control plane (definition/evpn.c). */
struct evpn {
	uint32_t asn; /* 1..4294967295, one iBGP AS for the cluster */
	size_t n_reflectors;
	/* route_reflectors: node names as given (checked by the verifier) */
	char (*reflectors)[FABRICD_NAME_MAX + 1];
};

struct fabric {
	struct ip_prefix prefix;
	uint16_t listen_port;
	uint16_t secure_port;	   /* default 4790 */
	unsigned int keepalive;	   /* seconds, 0 = off, default 25 */
	unsigned int underlay_mtu; /* valid with FABRIC_HAS_UNDERLAY_MTU */
	unsigned int flags;
	enum control_plane control_plane; /* default of every zone */
	struct evpn evpn;		  /* valid with FABRIC_HAS_EVPN */
};

enum node_flags {
	NODE_HAS_LISTEN_PORT = 1U << 0,
	NODE_HAS_ENDPOINT = 1U << 1,
};

struct node {
	char name[FABRICD_NAME_MAX + 1];
	struct ip_addr underlay;
	struct ip_addr fabric_address;
	uint8_t public_key[WG_KEY_LEN];
	uint16_t listen_port; /* with NODE_HAS_LISTEN_PORT, else fabric.listen_port */
	/* "host:port" or "[v6]:port" where the node is reached through NAT */
	char endpoint_host[FABRICD_HOST_MAX + 1];
	uint16_t endpoint_port;
	unsigned int flags;
};

struct vnet {
	char name[FABRICD_IFNAME_MAX + 1];
	uint32_t vni; /* 1..16777215 */
	/* "" or the foreign VXLAN port (Proxmox's vxlan_<vnet>) fabricd takes over */
	char replaces[FABRICD_IFNAME_MAX + 1];
};

enum zone_flags {
	ZONE_HAS_MTU = 1U << 0,
	ZONE_HAS_NODES = 1U << 1,
	ZONE_HAS_CONTROL_PLANE = 1U << 2,
	/* "bridges": "existing": the vnet bridges are another manager's (Proxmox's) */
	ZONE_EXISTING_BRIDGES = 1U << 3,
	/* "pve_zone": the vnets are a Proxmox Simple zone's (definition/pve_follow.h) */
	ZONE_PVE_FOLLOW = 1U << 4,
	/* made from Proxmox's files by --sdn-dir (no definition): messages name Proxmox's zone */
	ZONE_PVE_SDN = 1U << 5,
};

#define PVE_ZONE_ID_MAX	    8	    /* Proxmox zone and vnet ids: 2..8 characters */
#define PVE_VNI_FIRST	    1048576 /* the default "vni_range" of a followed zone */
#define PVE_VNI_LAST	    16777215
#define FABRICD_SDN_DIR_MAX 255

struct zone {
	char name[FABRICD_NAME_MAX + 1];
	enum transport transport;
	enum mtu_policy mtu_policy;
	unsigned int mtu; /* with ZONE_HAS_MTU: may only lower the computed MTU */
	unsigned int flags;
	enum control_plane control_plane; /* its own or fabric.control_plane */
	size_t n_members;
	size_t *members; /* indices into cluster.nodes, in definition order */
	size_t n_vnets;
	struct vnet *vnets; /* with ZONE_PVE_FOLLOW: the pins until pve_follow_load() */
	/* with ZONE_PVE_FOLLOW: Proxmox's zone id and the VNIs vnet names hash into */
	char pve_zone[PVE_ZONE_ID_MAX + 1];
	/* that Proxmox zone's "mtu", its guests' MTU; 0 when unset (they keep 1500) */
	unsigned int pve_mtu;
	uint32_t vni_first, vni_last;
};

struct cluster {
	int version;
	char name[FABRICD_NAME_MAX + 1];
	struct fabric fabric;
	size_t n_nodes;
	struct node *nodes;
	size_t n_zones;
	struct zone *zones;
	/* "pve_sdn_dir": where a followed zone's .running-config is (/etc/pve/sdn) */
	char pve_sdn_dir[FABRICD_SDN_DIR_MAX + 1];
};

/* NULL-safe; frees the whole tree. */
void cluster_free(struct cluster *c);

/* Index of the node called name, or -1. */
int cluster_find_node(const struct cluster *c, const char *name);
/* A node, zone or cluster name: [a-z0-9][a-z0-9-]*, at most FABRICD_NAME_MAX bytes. */
bool name_valid(const char *s);
/* A name fabricd gives a device of its own (wgfab0, vx<VNI>, vs<VNI>): no vnet may have it. */
bool name_reserved(const char *s);
/*
 * A name no bridge can take: the kernel refuses "all" and "default" (they name
 * the per-protocol settings in /proc/sys/net/ipv4/conf/ and ipv6), and every
 * network namespace has "lo".
 */
bool name_kernel_refuses(const char *s);

/* Port the node listens on: its own override or the fabric's. */
uint16_t node_listen_port(const struct cluster *c, const struct node *n);

/*
 * The family whose WireGuard overhead sizes the fabric device, the same on
 * every node so that a zone has one MTU: IPv6 when the underlay is IPv6 or
 * any node's endpoint is an IPv6 literal (its peers reach it over IPv6, and
 * WireGuard answers them where they came from), else the underlay's.
 */
int cluster_wg_family(const struct cluster *c, int underlay_family);

/*
 * A cluster's vnets by name, for lookups in a loop over another definition's
 * vnets (1024 each: a scan per lookup was half a million strcmp a pass).
 */
struct cluster_vnet_ix {
	const char *name;
	const struct zone *zone;
	const struct vnet *v;
	size_t at; /* in definition order */
};

struct cluster_vnet_index {
	const struct cluster *c;
	size_t n;
	struct cluster_vnet_ix
	    *by_name; /* NULL (none, or out of memory): cluster_vnet_index_find scans c */
};

void cluster_vnet_index_make(const struct cluster *c, struct cluster_vnet_index *ix);
/* The first vnet called name (in definition order) and its zone (when asked), or NULL. */
const struct vnet *cluster_vnet_index_find(const struct cluster_vnet_index *ix, const char *name,
					   const struct zone **zone);
void cluster_vnet_index_free(struct cluster_vnet_index *ix);

/* Whether node index idx is a member of zone z. */
int zone_has_member(const struct zone *z, size_t idx);

const char *transport_name(enum transport t);
const char *mtu_policy_name(enum mtu_policy p);
const char *control_plane_name(enum control_plane cp);

#endif
