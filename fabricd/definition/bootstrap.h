/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/bootstrap.h - the edits behind `fabricd init|join|leave`: a new
 * definition with its first node, a node added (or its key rotated), a node
 * removed. Text in, text out: the input must be a valid definition, the
 * output is validated again before it is returned, key order and every
 * other value are kept (jansson, JSON_PRESERVE_ORDER). No file or network
 * I/O here; engine/deffile.h reads, locks and replaces the file.
 */
#ifndef FABRICD_BOOTSTRAP_H
#define FABRICD_BOOTSTRAP_H

#include <stdbool.h>
#include <jansson.h>
#include <stddef.h>

#include "base/addr.h"
#include "base/diag.h"
#include "definition/model.h"

/* This node as it joins: every field is text as it goes into the definition. */
struct member_request {
	const char *name;
	const char *underlay;	/* an IPv4 or IPv6 literal */
	const char *public_key; /* base64 */
};

enum bootstrap_outcome {
	BOOTSTRAP_ADDED,     /* a new node (init, join) */
	BOOTSTRAP_UNCHANGED, /* already a member with this key / not a member (leave) */
	BOOTSTRAP_ROTATED,   /* a member with another key, replaced (--rotate-key) */
	BOOTSTRAP_REMOVED,   /* leave */
};

struct bootstrap_result {
	enum bootstrap_outcome outcome;
	char *text;			     /* the new definition (malloc), NULL when unchanged */
	char fabric_address[IP_ADDR_STRLEN]; /* the node's, after the edit (init, join) */
	size_t zones_left;		     /* leave: zones whose node list lost the node */
	bool reflector_left;		     /* leave: taken out of fabric.evpn.route_reflectors */
	size_t changed;			     /* zone/vnet edits: vnets added or removed */
	char absent[256];		     /* vnet remove: the names in no zone, ", " between */
};

/*
 * The first address of c's fabric prefix that no node uses: the network
 * address itself and, for IPv4 prefixes up to /30, the broadcast address are
 * never given out. -ENOSPC when the prefix is full.
 */
int bootstrap_free_address(const struct cluster *c, struct ip_addr *out);

/* A new definition: cluster, prefix, listen port and m as its only node. */
int bootstrap_create(const char *cluster, const char *prefix, unsigned int listen_port,
		     const struct member_request *m, struct bootstrap_result *res, struct diag *d);

/*
 * Adds m to the definition text. A member of that name with the same key is
 * BOOTSTRAP_UNCHANGED; with another key an error unless rotate_key, which
 * replaces its public_key (BOOTSTRAP_ROTATED). 0 or -EINVAL with the reasons
 * (JSON paths first) in d.
 */
int bootstrap_join(const char *text, size_t len, const struct member_request *m, bool rotate_key,
		   struct bootstrap_result *res, struct diag *d);

/*
 * Removes node name from nodes[], from every zones[].nodes list and from
 * fabric.evpn.route_reflectors (refused when it is the only reflector).
 */
int bootstrap_leave(const char *text, size_t len, const char *name, struct bootstrap_result *res,
		    struct diag *d);

void bootstrap_result_free(struct bootstrap_result *res);

/*
 * For the edits built on these (definition/zone_edit.c): the input text,
 * valid, as a model (for lookups) and as a jansson tree (for the edit);
 * -EINVAL with the loader's reasons in d. The caller frees both.
 */
int bootstrap_load(const char *text, size_t len, struct cluster **c, json_t **root, struct diag *d);

/* The edited tree as text, validated again; on success res->text owns it. */
int bootstrap_finish(json_t *root, struct bootstrap_result *res, struct diag *d);

#endif
