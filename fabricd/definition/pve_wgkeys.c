// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_wgkeys.c - one private key out of Proxmox's priv/wg-keys.cfg
 * (every node's keys, replicated by pmxcfs, readable by root only). Only the
 * key asked for is decoded; nothing here prints key material.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "definition/pve_import.h"
#include "definition/wgkey.h"

int pve_wgkeys_find(const struct pve_file *wgkeys, const char *pve_node, const char *iface,
		    uint8_t key[32], char *err, size_t errlen)
{
	char where[PVE_WHERE_LEN], perr[160];

	for (size_t i = 0; i < wgkeys->n; i++) {
		const struct pve_section *s = &wgkeys->sections[i];

		if (strcmp(s->type, "node") || strcasecmp(s->id, pve_node))
			continue;
		pve_where(where, wgkeys, s, "private_keys");
		for (size_t k = 0; k < s->n_kv; k++) {
			struct pve_props p;
			const char *name, *b64;
			int ret = 0;

			if (strcmp(s->kv[k].key, "private_keys") || !s->kv[k].value)
				continue;
			/* perr may quote the text: say only where it is, never the value */
			if (pve_props_parse(s->kv[k].value, &p, perr, sizeof(perr)) < 0) {
				snprintf(err, errlen, "%s: line %u is not name=IFACE,key=KEY",
					 where, s->kv[k].line);
				return -EINVAL;
			}
			name = pve_props_get(&p, "name");
			b64 = pve_props_get(&p, "key");
			if (name && !strcmp(name, iface)) {
				ret = b64 && wgkey_from_base64(b64, key) == 0 ? 1 : -EINVAL;
				if (ret < 0)
					snprintf(err, errlen,
						 "%s: the key of %s is not a base64 "
						 "WireGuard key",
						 where, iface);
			}
			for (size_t j = 0; j < p.n; j++)
				explicit_bzero(p.kv[j].value, strlen(p.kv[j].value));
			pve_props_free(&p);
			if (ret)
				return ret < 0 ? ret : 0;
		}
	}
	snprintf(err, errlen, "%s has no private_keys name=%s for node %s", wgkeys->name, iface,
		 pve_node);
	return -ENOENT;
}
