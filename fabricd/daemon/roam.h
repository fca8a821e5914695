/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/roam.h - which peers' endpoints a new definition moved. The daemon
 * sets an existing peer's endpoint only then (engine/reconcile.h, roaming):
 * an endpoint the kernel learned from an authenticated packet, a node
 * behind NAT whose source port changed, is WireGuard working as designed.
 */
#ifndef FABRICD_ROAM_H
#define FABRICD_ROAM_H

#include "definition/model.h"
#include "engine/reconcile.h"

/*
 * Turns roaming on for r and marks the nodes of next (by index) whose
 * endpoint differs from the same-named node of prev; prev NULL marks none.
 * 0 or -ENOMEM.
 */
int roam_mark_moved(struct reconcile *r, const struct cluster *prev, const struct cluster *next);

#endif
