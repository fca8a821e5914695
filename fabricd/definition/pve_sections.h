/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/pve_sections.h - Proxmox VE section-config files, read as Proxmox reads them.
 *
 * Two dialects share the syntax ("type: id" header, indented "key value" lines,
 * a blank line ends a section) but not the rules:
 *   PERL (zones/vnets/subnets/controllers.cfg, PVE::SectionConfig) skips "#" lines
 *        anywhere and drops a bad line with a warning;
 *   RUST (fabrics.cfg, priv/wg-keys.cfg, proxmox-section-config) has no comments
 *        and rejects the whole file on any bad line or a key without value.
 * Keys are kept in file order, repeated keys too (arrays are written that way);
 * which keys are single or known is the importer's business (pve_import.c).
 * .running-config (JSON) is turned into the same shape by pve_running.c.
 */
#ifndef FABRICD_PVE_SECTIONS_H
#define FABRICD_PVE_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"

enum pve_dialect {
	PVE_DIALECT_PERL,
	PVE_DIALECT_RUST,
};

struct pve_kv {
	char *key;
	char *value; /* NULL for a bare key (Perl: boolean true) */
	unsigned int line;
};

struct pve_section {
	char *type;
	char *id;
	unsigned int line; /* of the header; 0 when read from JSON */
	size_t n_kv;
	struct pve_kv *kv;
};

struct pve_file {
	const char *name; /* for messages: "zones.cfg", ".running-config" (not owned) */
	enum pve_dialect dialect;
	size_t n;
	struct pve_section *sections;
};

#define PVE_WHERE_LEN 512

/*
 * Parses text into f (f->name set by the caller, used in every message).
 * Problems go to diag as "FILE:LINE: ..."; PERL problems are warnings and the
 * line is skipped, RUST problems are errors and the file is emptied, as
 * Proxmox does. Returns 0, -EINVAL (RUST file rejected) or -ENOMEM.
 */
int pve_file_parse(struct pve_file *f, const char *text, size_t len, struct diag *diag);
void pve_file_free(struct pve_file *f);
/* Zeroes every value (for priv/wg-keys.cfg) before pve_file_free. */
void pve_file_wipe(struct pve_file *f);

/* Sorts the sections by id (Perl writes hash order; imports should not depend on it). */
void pve_file_sort(struct pve_file *f);

/* Appends an empty section (for pve_running.c); NULL on ENOMEM. */
struct pve_section *pve_file_add_section(struct pve_file *f, const char *type, const char *id,
					 unsigned int line);
/* Appends key (value may be NULL); 0 or -ENOMEM. */
int pve_section_add(struct pve_section *s, const char *key, const char *value, unsigned int line);

/* The first value of key, or NULL; *count (may be NULL) says how often it occurs. */
const struct pve_kv *pve_section_get(const struct pve_section *s, const char *key, size_t *count);

/* "zones.cfg:12 [vxlan: lab] peers" (key may be NULL) into buf of PVE_WHERE_LEN. */
const char *pve_where(char *buf, const struct pve_file *f, const struct pve_section *s,
		      const char *key);

/*
 * The warning for a vlan-aware vnet (where: its section) of a Simple zone that
 * fabricd's zone follows: one wording for check, plan and run (pve_follow.c)
 * and import-pve --simple (pve_import_zones.c).
 */
void pve_warn_vlanaware(struct diag *d, const char *where, const char *zone);

/*
 * Boolean as the dialect accepts it: PERL "1"/"0" (a bare key is 1); RUST and
 * property strings 1|0|on|off|yes|no|true|false in any case. 0 or -EINVAL.
 */
int pve_parse_bool(enum pve_dialect d, const char *value, bool *out);

/*
 * Splits a Proxmox list value ("a,b c;d") on ',', ';' and whitespace, dropping
 * empty items, as PVE::Tools::split_list does. Returns the count; *items is a
 * NULL-terminated array to free with pve_strv_free. -ENOMEM on failure.
 */
int pve_split_list(const char *value, char ***items);
void pve_strv_free(char **v);

/*
 * Property string "k=v,k2=\"a,b\"" (proxmox-schema): values with ',', '"', '\'
 * are double-quoted with \" \\ \n escapes. Fills a key/value list (line 0).
 * 0, -EINVAL (err says what is wrong) or -ENOMEM.
 */
struct pve_props {
	size_t n;
	struct pve_kv *kv;
};
int pve_props_parse(const char *text, struct pve_props *out, char *err, size_t errlen);
const char *pve_props_get(const struct pve_props *p, const char *key);
void pve_props_free(struct pve_props *p);

#endif
