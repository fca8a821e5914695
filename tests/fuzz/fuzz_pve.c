// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_pve.c - libFuzzer harness for the Proxmox readers and the importer.
 * The first byte picks the target: 0 a Perl section-config file, 1 a Rust one
 * (fabrics.cfg, wg-keys.cfg), 2 a property string, 3 corosync.conf, 4
 * .running-config, 5 .running-config imported with a fixed corosync.conf.
 * Invariant of 5: whatever maps, with at least one node, is a definition
 * that loads (what --partial writes always passes fabricd check).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/pve_corosync.h"
#include "definition/pve_import.h"
#include "definition/pve_running.h"
#include "definition/pve_sections.h"
#include "definition/wgkey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char corosync[] =
    "totem {\n cluster_name: Fz\n}\nnodelist {\n"
    " node {\n  name: hv1\n  nodeid: 1\n  ring0_addr: 203.0.113.11\n }\n"
    " node {\n  name: hv2\n  nodeid: 2\n  ring0_addr: 203.0.113.12\n }\n"
    " node {\n  name: HV3\n  nodeid: 3\n  ring0_addr: 203.0.113.13\n }\n}\n";

static int fixed_key(void *ctx, const char *node, uint8_t pub[32])
{
	uint8_t priv[32] = {1};

	(void)ctx;
	strncpy((char *)priv + 1, node, sizeof(priv) - 1); /* one key per node name */
	wgkey_public(pub, priv);
	return 0;
}

static void import(const char *text, size_t len)
{
	struct pve_import_opts opts = {.new_key = fixed_key};
	struct corosync_conf cc;
	struct pve_running r;
	struct pve_import *imp = NULL;
	struct cluster *c = NULL;
	struct diag d;
	char *json;

	diag_init(&d);
	if (corosync_parse(corosync, strlen(corosync), "corosync.conf", &cc, &d) < 0)
		__builtin_trap();
	if (pve_running_parse(text, len, &r, &d) == 0) {
		struct pve_input in = {&r.zones,   &r.vnets, &r.subnets,     &r.controllers,
				       &r.fabrics, &cc,	     "corosync.conf"};

		if (pve_import_run(&in, &opts, &imp, &d) == 0) {
			json = pve_import_json(imp);
			if (!json)
				__builtin_trap();
			if (pve_import_node_count(imp) > 0 &&
			    config_load_buffer(json, strlen(json), &c, &d) < 0)
				__builtin_trap();
			free(json);
		}
		pve_import_free(imp);
		pve_running_free(&r);
	}
	cluster_free(c);
	corosync_free(&cc);
	diag_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, err[160];
	struct pve_file f = {.name = "fuzz.cfg"};
	struct corosync_conf cc;
	struct pve_running r;
	struct pve_props p;
	struct diag d;

	if (size < 1 || size > 65536)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	diag_init(&d);
	switch (data[0] % 6) {
	case 0:
	case 1:
		f.dialect = data[0] % 6 ? PVE_DIALECT_RUST : PVE_DIALECT_PERL;
		if (pve_file_parse(&f, text, size - 1, &d) == 0) {
			for (size_t i = 0; i < f.n; i++)
				if (!f.sections[i].type[0] || !f.sections[i].id[0])
					__builtin_trap();
			pve_file_sort(&f);
		}
		pve_file_wipe(&f);
		pve_file_free(&f);
		break;
	case 2:
		if (pve_props_parse(text, &p, err, sizeof(err)) == 0)
			pve_props_free(&p);
		break;
	case 3:
		if (corosync_parse(text, size - 1, "c", &cc, &d) == 0)
			corosync_free(&cc);
		break;
	case 4:
		if (pve_running_parse(text, size - 1, &r, &d) == 0)
			pve_running_free(&r);
		break;
	default:
		import(text, size - 1);
	}
	diag_free(&d);
	free(text);
	return 0;
}
