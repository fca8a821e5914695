/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/fabric.h - the WireGuard fabric device wgfab0: the link (alias, MTU, up),
 * its fabric address, its key and port, and one peer per other node, changed
 * one peer at a time so live sessions survive.
 */
#ifndef FABRICD_FABRIC_H
#define FABRICD_FABRIC_H

#include "engine/reconcile.h"

/* fabric_kind (kinds/kind.h) plans all of it, the address through ifaddr_kind. */

/* The peer change an OP_WG_PEER stands for (allowed_ips points into the desired state). */
/* A WireGuard device of either backend (wireguard-go's is a TUN device): what can be the fabric. */
bool fabric_link_is_wireguard(const struct link_obs *l);
/*
 * The fabric device renamed by hand while the daemon watched (observed.renamed)
 * when none has its name: it gets its name back, its peers and sessions kept
 * (made anew, it could not bind the port the renamed one holds). NULL if none.
 */
struct observed;
const struct link_obs *fabric_renamed(const struct observed *have, const char *owner);
void fabric_peer_of(const struct op *op, struct wg_peer *out);
/* The device change an OP_WG_DEVICE stands for, with private_key when it sets the key. */
void fabric_device_of(const struct op *op, const uint8_t *private_key, struct wg_device *out);

#endif
