/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_import.h - a fabricd cluster definition from Proxmox VE's SDN
 * configuration (zones, vnets, the WireGuard fabric) and corosync.conf.
 *
 * Mapping (see README "Proxmox VE"):
 *   corosync nodelist + wireguard_node sections -> nodes (underlay: the WG
 *   endpoint if it is an address, else the first ringN_addr that is one);
 *   the wireguard_fabric the VXLAN zones use -> fabric (ip_prefix, node ip,
 *   the node's one interface: listen_port, public_key; keepalive 0 if unset);
 *   vxlan zone with fabric=<wireguard fabric> -> secure, with peers -> plain;
 *   vnet tag -> vni. Whatever has no counterpart is an error (EVPN zones,
 *   external WireGuard nodes, vlan-aware vnets, several WireGuard interfaces
 *   on a node, asymmetric peer lists, names colliding once lowercased,
 *   unknown peers) or, where dropping it loses nothing fabricd could build, a
 *   warning (aliases, subnets, ipam/dns, vxlan-port). Every message names the
 *   file, section and key. Files only: no DNS, no kernel.
 */
#ifndef FABRICD_PVE_IMPORT_H
#define FABRICD_PVE_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "definition/pve_corosync.h"
#include "definition/pve_sections.h"

struct pve_input {
	/* each non-NULL, possibly empty */
	const struct pve_file *zones, *vnets, *subnets, *controllers, *fabrics;
	const struct corosync_conf *corosync; /* NULL when not read */
	const char *corosync_name;	      /* for messages */
};

struct pve_import_opts {
	/* 0: not known; the MTU comparison then assumes 1500 and says so */
	unsigned int underlay_mtu;
	/*
	 * The node measures its underlay when it applies (run/apply --sdn-dir):
	 * a zone's "mtu" is kept as Proxmox has it, and compared there with what
	 * the zone carries (definition/desired.c), not with an assumed 1500.
	 */
	bool measured;
	/*
	 * Called for each node Proxmox has no WireGuard key for; fills pub and
	 * returns 0, or -errno. NULL: such a node is an error.
	 */
	int (*new_key)(void *ctx, const char *node, uint8_t pub[32]);
	void *ctx;
	/*
	 * NULL: Simple zones are Proxmox's alone (a warning). "plain" or "secure":
	 * each becomes a zone of that transport following it ("pve_zone", its
	 * vnets read at run time); sdn_dir (absolute, or NULL for /etc/pve/sdn)
	 * is then written as "pve_sdn_dir".
	 */
	const char *simple;
	const char *sdn_dir;
};

struct pve_import;

/*
 * Maps the input. Unmappable things are errors in diag (d->n > 0), notes
 * are warnings; *out is returned whenever a definition of the mappable rest
 * could be built (the caller writes it only when d->n == 0 or with --partial).
 * 0, or -ENOMEM / the new_key error.
 */
/*
 * corosync.conf's totem.cluster_name (NULL: absent) as fabricd's cluster
 * name, as import-pve writes it: "Lab_Cluster" -> "lab-cluster", "pve" when
 * there is none.
 */
void pve_cluster_name(const char *corosync_name, char *buf, size_t len);

int pve_import_run(const struct pve_input *in, const struct pve_import_opts *opts,
		   struct pve_import **out, struct diag *d);

/* The MTU Proxmox gives zone's guests (its "mtu", or Proxmox's default); 0 when unknown. */
unsigned int pve_import_guest_mtu(const struct pve_import *imp, const char *zone);

/* The definition as JSON text (2-space indent, newline); malloc'd or NULL. */
char *pve_import_json(const struct pve_import *imp);

/*
 * For --key-out: the Proxmox node name, WireGuard interface and public key
 * the import used for node (a fabricd name). -ENOENT if the node is not in the
 * definition or had no Proxmox key.
 */
int pve_import_node_key(const struct pve_import *imp, const char *node, const char **pve_name,
			const char **iface, uint8_t pub[32]);

/* How many nodes the definition holds (0: nothing worth writing). */
size_t pve_import_node_count(const struct pve_import *imp);

void pve_import_free(struct pve_import *imp);

/*
 * Finds the private key of (pve_node, iface) in priv/wg-keys.cfg ("node:
 * <host>" sections, repeated "private_keys name=<iface>,key=<base64>").
 * 0, -ENOENT (not there), -EINVAL (malformed; err says where). The key is
 * wiped by the caller.
 */
int pve_wgkeys_find(const struct pve_file *wgkeys, const char *pve_node, const char *iface,
		    uint8_t key[32], char *err, size_t errlen);

#endif
