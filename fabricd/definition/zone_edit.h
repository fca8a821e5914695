/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/zone_edit.h - the edits behind `fabricd zone add|remove` and
 * `fabricd vnet add|remove`: zones and vnets created and removed without
 * editing JSON by hand. Text in, text out, like definition/bootstrap.h: the
 * input must be a valid definition, the output is validated again (so a
 * duplicate VNI or an unknown node is refused with the loader's JSON path),
 * and key order and every other value are kept. No file or network I/O.
 */
#ifndef FABRICD_ZONE_EDIT_H
#define FABRICD_ZONE_EDIT_H

#include <stddef.h>

#include "base/diag.h"
#include "definition/bootstrap.h"

/* One vnet as given on the command line ("NAME:VNI"). */
struct vnet_request {
	char name[64]; /* checked by the loader (at most 15 bytes, [a-z0-9-]) */
	long long vni; /* checked by the loader (1..16777215) */
};

/*
 * "NAME:VNI" into v; option names the argument in the message ("--vnet",
 * "vnet add"). 0 or -EINVAL with the reason in d.
 */
int vnet_request_parse(const char *arg, const char *option, struct vnet_request *v, struct diag *d);

struct zone_request {
	const char *name;
	const char *transport; /* "plain" or "secure" */
	const struct vnet_request *vnets;
	size_t n_vnets;
	const char *const *nodes; /* NULL: no "nodes" key, the zone is on every node */
	size_t n_nodes;
	const char *pve_zone; /* NULL, or the Proxmox Simple zone followed (vnets then pins) */
};

/*
 * Appends zone z. A zone of that name with the same transport (and node
 * list, when z gives one) that already has every vnet of z is
 * BOOTSTRAP_UNCHANGED; any other zone of that name is an error naming it.
 */
int zone_edit_add(const char *text, size_t len, const struct zone_request *z,
		  struct bootstrap_result *res, struct diag *d);

/* Removes zone name with its vnets; BOOTSTRAP_UNCHANGED when there is none. */
int zone_edit_remove(const char *text, size_t len, const char *name, struct bootstrap_result *res,
		     struct diag *d);

/*
 * Appends vnets to zone zone; a vnet already in that zone with the same VNI
 * is left as it is (res->changed counts the others). An unknown zone is an
 * error.
 */
int vnet_edit_add(const char *text, size_t len, const char *zone, const struct vnet_request *vnets,
		  size_t n, struct bootstrap_result *res, struct diag *d);

/* Removes the vnets named, from whichever zone has them; names not found are skipped. */
int vnet_edit_remove(const char *text, size_t len, const char *const *names, size_t n,
		     struct bootstrap_result *res, struct diag *d);

#endif
