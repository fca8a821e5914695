/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/fabric.h - the WireGuard fabric device wgfab0: the link (alias, MTU, up),
 * its fabric address, its key and port, and one peer per other node, changed
 * one peer at a time so live sessions survive.
 */
#ifndef FABRICD_FABRIC_H
#define FABRICD_FABRIC_H

#include "engine/reconcile.h"

int fabric_plan(struct reconcile *r, const struct node_state *want, const struct observed *have,
		struct plan *p, struct diag *diag);

#endif
