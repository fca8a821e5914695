/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_running.h - Proxmox's deployed SDN configuration
 * (/etc/pve/sdn/.running-config, one JSON object written on "Apply"), turned
 * into the same pve_file shape the *.cfg files give, so one importer reads both.
 */
#ifndef FABRICD_PVE_RUNNING_H
#define FABRICD_PVE_RUNNING_H

#include <stddef.h>

#include "base/diag.h"
#include "definition/pve_sections.h"

/* The parts of .running-config fabricd reads; each file's name is set. */
struct pve_running {
	struct pve_file zones, vnets, subnets, controllers, fabrics;
	long version; /* -1 when absent */
};

/*
 * Parses the JSON text. Values become section keys as the *.cfg files hold
 * them: {"hv1":1,"hv2":1} -> "hv1,hv2", numbers -> decimal text, booleans ->
 * "1"/"0", arrays -> the key repeated. Unknown top-level keys are ignored.
 * 0, -EINVAL (with the problem in diag) or -ENOMEM.
 */
int pve_running_parse(const char *text, size_t len, struct pve_running *out, struct diag *diag);
void pve_running_free(struct pve_running *r);

#endif
