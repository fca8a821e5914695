/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli/status_evpn.h - the "evpn" part of `status` (FRR's view), for nodes in EVPN zones. */
#ifndef FABRICD_STATUS_EVPN_H
#define FABRICD_STATUS_EVPN_H

#include <jansson.h>

#include "definition/model.h"
#include "engine/options.h"

/* Adds "evpn" to j when node self is in an EVPN zone. */
void status_evpn_add(const struct options *o, const struct cluster *c, size_t self, json_t *j);
/* Prints j's "evpn" part, if any. */
void status_evpn_print(json_t *j);

#endif
