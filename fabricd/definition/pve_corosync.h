/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_corosync.h - the parts of Proxmox's corosync.conf the importer
 * needs: the cluster name and each node's name, id and link addresses.
 * Syntax as pve-cluster's parser reads it: '#' comments, "name {" ... "}"
 * blocks, "key: value" pairs (no spaces in values).
 */
#ifndef FABRICD_PVE_COROSYNC_H
#define FABRICD_PVE_COROSYNC_H

#include <stddef.h>

#include "base/diag.h"

#define COROSYNC_LINKS 8 /* ring0_addr .. ring7_addr / link0..7 */

struct corosync_node {
	char *name;
	unsigned long nodeid;	    /* 0 = not given */
	char *addr[COROSYNC_LINKS]; /* as written: an IP or a host name; NULL = unset */
	unsigned int line;
};

struct corosync_conf {
	char *cluster_name; /* totem.cluster_name, NULL if absent */
	size_t n_nodes;
	struct corosync_node *nodes;
};

/*
 * Parses corosync.conf text. Problems (unbalanced braces, a node without
 * name, duplicate names) go to diag as "NAME:LINE: ..." errors, where NAME is
 * file_name. 0 or -EINVAL / -ENOMEM; on error *out is emptied.
 */
int corosync_parse(const char *text, size_t len, const char *file_name, struct corosync_conf *out,
		   struct diag *diag);
void corosync_free(struct corosync_conf *c);

#endif
