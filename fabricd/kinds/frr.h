/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/frr.h - fabricd's part of FRR's configuration (frr.conf), for the
 * BGP EVPN control plane: rendered from the definition, and spliced into the
 * operator's file between two marker comments so that everything else in it
 * (another router bgp in a VRF, other daemons' lines) stays as it is. Pure:
 * text in, text out; engine/frr.c reads and writes the file and runs FRR.
 */
#ifndef FABRICD_KINDS_FRR_H
#define FABRICD_KINDS_FRR_H

#include <stdbool.h>
#include <stddef.h>

#include "definition/model.h"

#define FRR_PEER_GROUP "fabricd"
/* where FRR keeps frr.conf (a pathspace's: in NAME/ under it) */
#define FRR_CONF_DIR "/etc/frr"

/*
 * The fragment of node self, marked with owner ("fabricd:<cluster>"), into a
 * malloc'd string; *out = NULL when the node is in no EVPN zone. 0 or -ENOMEM.
 */
int frr_render(const struct cluster *c, size_t self, const char *owner, char **out);

/* A malloc'd copy of owner's marked block in conf (markers included), or NULL when none. */
int frr_extract(const char *conf, const char *owner, char **block);

/*
 * conf with owner's block replaced by block (appended when conf has none;
 * removed when block is NULL), into a malloc'd string. 0 or -ENOMEM.
 */
int frr_splice(const char *conf, const char *owner, const char *block, char **out);

/*
 * A default-VRF "router bgp" outside owner's block: FRR allows only one, so
 * fabricd cannot add its own. Returns its 1-based line number (text in
 * line), or 0 when there is none.
 */
int frr_foreign_bgp(const char *conf, const char *owner, char *line, size_t len);

/*
 * Whether FRR's running configuration (`show running-config`) lacks a line of
 * fabricd's block (changed by vtysh by hand, say): the first such line into
 * line. Comments and exits are not compared; the block's lines are looked for
 * inside its router (its first line, at column 0, up to that router's exit).
 */
bool frr_running_lacks(const char *running, const char *block, char *line, size_t len);

/* The number of BGP neighbors in a rendered block (for plan's summary). */
size_t frr_block_neighbors(const char *block);

struct node_state;
struct plan;
struct diag;

/*
 * Plans fabricd's part of frr.conf for want: conf is the file as read ("" when
 * absent), block fabricd's block in it (NULL when none). One OP_FRR_CONFIG
 * when the block must change (its text: the new block, NULL to remove it).
 * A foreign default-VRF router bgp is a conflict (diag). 0 or -ENOMEM.
 */
int frr_plan(const struct node_state *want, const char *conf, const char *block, struct plan *p,
	     struct diag *diag);

/*
 * Why frr.conf could not be read (err: frr_obs.read_error), with what to do:
 * a message of its own for a link of the frr user's; buf for the others.
 */
const char *frr_read_why(int err, char *buf, size_t len);

/*
 * For down: removes fabricd's block when there is one, or may be one (a
 * reload cut short, a file that could not be read). 0 or -ENOMEM.
 */
struct frr_obs;
int frr_plan_down(const struct frr_obs *frr, struct plan *p);
#endif
