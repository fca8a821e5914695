/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/ifupdown.h - living with ifupdown2 (Proxmox VE's network manager) in
 * bridges fabricd does not own (zone "bridges": "existing").
 *
 * On every "ifreload -a" (each SDN "Apply" in Proxmox) ifupdown2 removes from
 * a bridge every port its configuration does not list, unless the port's name
 * matches the bridge's bridge-ports-condone-regex (Proxmox: ^(tap|veth|fwpr)).
 * ifupdown2 merges several "iface X" stanzas of one interface, so fabricd
 * writes its own file with one stanza per such bridge that widens the regex
 * to its VXLAN devices (vx<VNI>, vs<VNI>) and keeps Proxmox's own prefixes.
 * The file is written before a port is added, so no reload can race it.
 */
#ifndef FABRICD_IFUPDOWN_H
#define FABRICD_IFUPDOWN_H

#include <stddef.h>

#include "definition/desired.h"

#define IFUPDOWN_DEFAULT_FILE "/etc/network/interfaces.d/fabricd"
#define IFUPDOWN2_DIR	      "/usr/share/ifupdown2" /* the default file only where it is installed */
#define IFUPDOWN_CONDONE      "^(tap|veth|fwpr|vx[0-9]+$|vs[0-9]+$)"

/*
 * The file's text for node state s (a malloc'd string; "" when s has no vnet
 * in an existing bridge). NULL on ENOMEM.
 */
char *ifupdown_render(const struct node_state *s);

/*
 * Brings path (NULL: IFUPDOWN_DEFAULT_FILE, skipped when its directory or
 * ifupdown2 is not there) in line with s: written atomically when it differs, removed when
 * nothing is left (only if fabricd wrote it). Failures are logged; 0 or -errno.
 */
int ifupdown_sync(const struct node_state *s, const char *path);

#endif
