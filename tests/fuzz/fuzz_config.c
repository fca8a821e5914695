// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_config.c - libFuzzer harness for the definition loader. Any input must
 * either load into a cluster that keeps the model's invariants, or fail with
 * at least one error and no cluster; ASan and LeakSanitizer check the rest.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "definition/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What downstream code relies on after a successful load. */
static void check_cluster(const struct cluster *c)
{
	if (c->version != 1 || !c->name[0] || !c->n_nodes || !c->fabric.listen_port ||
	    c->fabric.secure_port == 4789)
		__builtin_trap();
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];

		if (!n->name[0] || n->underlay.family != c->nodes[0].underlay.family ||
		    !ip_prefix_contains(&c->fabric.prefix, &n->fabric_address))
			__builtin_trap();
	}
	for (size_t i = 0; i < c->n_zones; i++) {
		const struct zone *z = &c->zones[i];

		if (!z->name[0] || !z->n_members)
			__builtin_trap();
		for (size_t m = 0; m < z->n_members; m++) {
			if (z->members[m] >= c->n_nodes)
				__builtin_trap();
		}
		for (size_t v = 0; v < z->n_vnets; v++) {
			if (!z->vnets[v].vni || z->vnets[v].vni > 16777215 ||
			    strlen(z->vnets[v].name) > FABRICD_IFNAME_MAX || !z->vnets[v].name[0])
				__builtin_trap();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cluster *c = NULL;
	struct diag d;
	int ret;

	diag_init(&d);
	ret = config_load_buffer((const char *)data, size, &c, &d);
	if (ret == 0) {
		if (!c || d.n)
			__builtin_trap();
		check_cluster(c);
	} else if (c || !d.n) {
		__builtin_trap();
	}
	cluster_free(c);
	diag_free(&d);
	return 0;
}
