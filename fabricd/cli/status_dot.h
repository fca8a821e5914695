/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli/status_dot.h - `fabricd status --dot` and `--svg`: the cluster as this
 * node sees it, in Graphviz. Nodes; fabric links coloured by WireGuard
 * handshake age and probe result; the zones with their transport and MTU.
 */
#ifndef FABRICD_CLI_STATUS_DOT_H
#define FABRICD_CLI_STATUS_DOT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "definition/model.h"

/* Writes the DOT text of status (the `status --json` object, probes included) to f. */
void status_dot_write(json_t *status, const struct cluster *c, FILE *f);
/* Prints the DOT text, or with svg the SVG `dot -Tsvg` makes of it. Exit status 0 or 1. */
int status_dot(json_t *status, const struct cluster *c, bool svg);

#endif
