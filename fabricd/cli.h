/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h - what every node command does first: load the definition, find the node. */
#ifndef FABRICD_CLI_H
#define FABRICD_CLI_H

#include <stddef.h>

#include "commands.h"
#include "model.h"

/* Loads and validates o->config, printing every problem; 0 or -1. */
int cli_load_cluster(const struct options *o, struct cluster **out);

/* The node named by -n, or the one named like this host; prints why not. 0 or -1. */
int cli_find_self(const struct options *o, const struct cluster *c, size_t *self);

#endif
