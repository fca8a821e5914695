/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_follow.h - zones whose vnets are a Proxmox Simple zone's.
 *
 * A zone of the definition with "pve_zone": "<id>" carries every vnet that
 * Proxmox's deployed SDN configuration (pve_sdn_dir/.running-config, written
 * on each SDN "Apply") puts in that Simple zone. Proxmox creates the bridges
 * (vnet id = bridge name) on every node; fabricd adds its VXLAN port. Simple
 * zone vnets have no tag, so every node derives the same VNI from the name
 * alone: FNV-1a (32 bit) of the vnet id, modulo the size of the zone's
 * "vni_range" [first, last], plus first. A vnet listed in the zone's "vnets"
 * is a pin: its VNI (and "replaces") from the definition wins; a pin Proxmox
 * does not have is not carried. Two vnets with one VNI, a name that cannot
 * be a vnet of fabricd's, or a followed zone Proxmox does not have (as a
 * Simple zone) are errors naming the Proxmox vnet or zone and what to pin.
 * A Proxmox zone restricted to some nodes ("nodes") has its bridges there
 * only: those become the zone's members, unless the definition lists its own.
 *
 * Files only (the definition and .running-config); no DNS, no kernel.
 */
#ifndef FABRICD_PVE_FOLLOW_H
#define FABRICD_PVE_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "definition/model.h"
#include "definition/pve_running.h"

/* Whether a zone of c follows a Proxmox Simple zone ("pve_zone"). */
bool pve_follows(const struct cluster *c);

/* c->pve_sdn_dir + "/.running-config" into buf. */
void pve_follow_path(const struct cluster *c, char *buf, size_t len);

/* The VNI a Proxmox vnet id hashes to in [first, last]. */
uint32_t pve_follow_vni(const char *id, uint32_t first, uint32_t last);

/*
 * Replaces each following zone's vnets by Proxmox's (r parsed from
 * .running-config). Problems go into d; on an error c is left as it was.
 * 0, -EINVAL (in d) or -ENOMEM.
 */
int pve_follow_apply(struct cluster *c, const struct pve_running *r, struct diag *d);

/* Reads pve_follow_path() and applies it; nothing is read when no zone follows. 0 or -errno. */
int pve_follow_load(struct cluster *c, struct diag *d);

/* config_load_file(), then pve_follow_load(): the definition as the node commands use it. */
int definition_load_file(const char *path, struct cluster **out, struct diag *d);

#endif
