/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_import_priv.h - state shared by pve_import.c (nodes and the
 * WireGuard fabric), pve_import_zones.c (zones and vnets) and
 * pve_import_out.c (the JSON definition).
 */
#ifndef FABRICD_PVE_IMPORT_PRIV_H
#define FABRICD_PVE_IMPORT_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/addr.h"
#include "definition/model.h"
#include "definition/pve_corosync.h"
#include "definition/pve_import.h"

struct imp_node {
	char name[FABRICD_NAME_MAX + 1];     /* fabricd's: lowercased */
	char pve_name[FABRICD_NAME_MAX + 1]; /* as Proxmox writes it */
	bool usable;
	unsigned long nodeid;
	struct ip_addr links[COROSYNC_LINKS]; /* literal corosync addresses */
	size_t n_links;
	struct ip_addr underlay;
	struct ip_addr endpoint_ip;		  /* the WireGuard endpoint, when an address */
	char endpoint_host[FABRICD_HOST_MAX + 1]; /* ... when a host name */
	bool endpoint_other_family;		  /* endpoint_ip is not the underlay's family */
	bool in_fabric;
	bool in_corosync; /* a node of corosync.conf's nodelist */
	struct ip_addr fabric_address;
	struct ip_prefix iface_net; /* the WireGuard interface's own ip=CIDR */
	bool has_key, key_from_pve;
	uint8_t pub[WG_KEY_LEN];
	uint16_t port;
	char iface[16];
	char **peers; /* internal peers this node lists (fabricd names) */
	size_t n_peers;
	const struct pve_section *fsec; /* its wireguard_node section */
};

struct imp_zone {
	char name[FABRICD_NAME_MAX + 1];
	enum transport transport;
	unsigned int mtu;	/* 0: none carried over */
	unsigned int guest_mtu; /* what Proxmox gives the guests: its "mtu" or its default */
	bool all_nodes;
	bool *member; /* per imp_node */
	json_t *vnets;
	const struct pve_section *sec;
	bool follow; /* a Simple zone followed: "pve_zone" = sec->id, no vnets */
};

struct pve_import {
	const struct pve_input *in;
	const struct pve_import_opts *opts;
	struct diag *d;
	char cluster[FABRICD_NAME_MAX + 1];
	size_t n_nodes;
	struct imp_node *nodes;
	const struct pve_section *fabric; /* the wireguard_fabric imported, or NULL */
	struct ip_prefix prefix;
	unsigned int keepalive;
	uint16_t listen_port;
	size_t n_zones;
	struct imp_zone *zones;
	size_t n_vnis;
	uint32_t *vnis;
	char **vnet_names;
};

/* pve_import_zones.c */
int imp_zones(struct pve_import *imp);
void imp_zones_free(struct pve_import *imp);

/* Used when Proxmox has no WireGuard fabric (or one without addresses). */
#define DEFAULT_PREFIX "10.255.0.0/24"
#define DEFAULT_PORT   51820

/* pve_import_fabric.c: the fabric to import (NULL: none), read, and addresses where it has none */
const struct pve_section *imp_choose_fabric(struct pve_import *imp);
int imp_read_fabric(struct pve_import *imp);
void imp_fill_fabric_addresses(struct pve_import *imp);

/* pve_import.c helpers used by the others */
int imp_find_node(const struct pve_import *imp, const char *name);
/*
 * The node whose WireGuard address (node ip, or its interface's own ip) in the
 * imported fabric a is, or -1: Proxmox routes VXLAN to it inside WireGuard.
 */
int imp_wg_node(const struct pve_import *imp, const struct ip_addr *a);
/* A node named after Proxmox's pve_name (where: for messages); its index, or < 0 (refused). */
int imp_add_node(struct pve_import *imp, const char *pve_name, const char *where);
/*
 * What makes a fix in Proxmox's files take effect, for messages: `import-pve`
 * is run again; a node that follows them (run/apply --sdn-dir) reads them
 * again itself.
 */
const char *imp_again(const struct pve_import *imp);
/* Lowercases src into dst; false if the result is not a valid fabricd name. */
bool imp_name(char *dst, size_t len, const char *src);
/* The single value of key; a repeated key is reported (Perl keeps the first, Rust fails). */
const char *imp_get(const struct pve_import *imp, const struct pve_file *f,
		    const struct pve_section *s, const char *key);

#endif
