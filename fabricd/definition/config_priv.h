/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/config_priv.h - shared by the parts of the definition loader only:
 * definition/config.c (JSON -> struct cluster, value by value), definition/config_pve.c
 * (the keys that follow Proxmox: pve_zone, vni_range, pve_sdn_dir) and definition/verify.c
 * (the rules that span objects). Nothing else includes it.
 *
 * Conversion leaves a field zeroed when its value was rejected (family 0, an
 * empty name, VNI 0, port 0, an all-zero key), so the verifier skips it
 * instead of reporting the same mistake twice.
 */
#ifndef FABRICD_CONFIG_PRIV_H
#define FABRICD_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/diag.h"
#include "definition/model.h"

#define CONFIG_PATH_LEN	 256 /* "zones[12].vnets[3].name" and an escaped unknown key */
#define CONFIG_VALUE_LEN 80  /* an offending value, quoted and truncated */

/*
 * Counts errors itself: diag_add() drops a message when memory runs out, and
 * a dropped error must still fail the load.
 */
struct config_report {
	struct diag *d;
	unsigned int errors;
};

void config_error(struct config_report *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One load: its report, the cluster being filled, and whether memory ran out. */
struct config_loader {
	struct config_report r;
	struct cluster *c;
	int oom;
};

/*
 * Field getters (config.c): path receives "parent.key". They return 1 when the
 * key is present with the right type, 0 when absent (an error if required,
 * which then says what to add), -1 when the value is wrong (already reported).
 */
int config_get_value(struct config_loader *l, json_t *obj, const char *parent, const char *key,
		     const char *required, char *path, json_t **out);
int config_get_string(struct config_loader *l, json_t *obj, const char *parent, const char *key,
		      const char *required, char *path, const char **out);
int config_get_container(struct config_loader *l, json_t *obj, const char *parent, const char *key,
			 const char *required, bool array, char *path, json_t **out);
/* A JSON value's type in words ("a string"), and its text, quoted and truncated, in buf. */
const char *config_jtype(const json_t *v);
const char *config_jtext(const json_t *v, char *buf, size_t len);

/* "pve_zone" and "vni_range" of zone obj (config_pve.c); true when "pve_zone" is there. */
bool config_load_pve_zone(struct config_loader *l, json_t *obj, const char *path, struct zone *z);
/* The top-level "pve_sdn_dir" (config_pve.c). */
void config_load_sdn_dir(struct config_loader *l, json_t *root);

/* Formats a JSON path into out (CONFIG_PATH_LEN bytes); a path too long is cut short. */
void config_path(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes s into buf as "text", escaping quotes and non-printable bytes, truncated with "...". */
const char *config_quote(const char *s, char *buf, size_t len);

/*
 * Value parsers (definition/values.c): path is the value's JSON path, s its text.
 * On success they fill the model field; otherwise they report and leave it.
 */
void config_parse_name(struct config_report *r, const char *path, const char *s, size_t max,
		       const char *kind, char *out);
void config_parse_addr(struct config_report *r, const char *path, const char *s,
		       struct ip_addr *out);
void config_parse_prefix(struct config_report *r, const char *path, const char *s,
			 struct ip_prefix *out);
void config_parse_key(struct config_report *r, const char *path, const char *s,
		      uint8_t out[WG_KEY_LEN]);
/* Fills endpoint_host, endpoint_port and NODE_HAS_ENDPOINT. */
void config_parse_endpoint(struct config_report *r, const char *path, const char *s,
			   struct node *n);

/*
 * An integer as JSON Schema counts one: a JSON integer, or a real number with
 * no fraction (100.0, 1e2; what a YAML-to-JSON converter or jq may write).
 * False for any other value, 100.5 too. A whole number past long long is
 * LLONG_MAX or LLONG_MIN, out of the caller's range.
 */
bool config_json_int(const json_t *v, long long *out);

/*
 * A definition jansson could not read: the line and column of a syntax error,
 * the JSON path of a duplicate key (text is what was parsed).
 */
void config_syntax_error(struct config_report *r, const char *source, const char *text, size_t len,
			 const json_error_t *jerr);

/* Uniqueness, prefix membership, address families, ports and MTU across the definition. */
void config_verify(const struct cluster *c, struct config_report *r);
/* Warns (into d) of a definition file every user may write, or replace (config_file.c). */
void config_check_writers(FILE *f, const char *path, struct diag *d);

/* The EVPN control plane: fabric.evpn present where used, reflectors are nodes (evpn.c). */
void evpn_verify(const struct cluster *c, struct config_report *r);

/* Host name syntax (RFC 1123 labels, not all-numeric); nothing is resolved. */
bool hostname_valid(const char *s);

#endif
