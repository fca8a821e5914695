/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/config_priv.h - shared by the two halves of the definition loader only:
 * definition/config.c (JSON -> struct cluster, value by value) and definition/verify.c (the
 * rules that span objects). Nothing else includes it.
 *
 * Conversion leaves a field zeroed when its value was rejected (family 0, an
 * empty name, VNI 0, port 0, an all-zero key), so the verifier skips it
 * instead of reporting the same mistake twice.
 */
#ifndef FABRICD_CONFIG_PRIV_H
#define FABRICD_CONFIG_PRIV_H

#include <stddef.h>

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

/* Uniqueness, prefix membership, address families, ports and MTU across the definition. */
void config_verify(const struct cluster *c, struct config_report *r);

/* The EVPN control plane: fabric.evpn present where used, reflectors are nodes (evpn.c). */
void evpn_verify(const struct cluster *c, struct config_report *r);

/* Host name syntax (RFC 1123 labels, not all-numeric); nothing is resolved. */
bool hostname_valid(const char *s);

#endif
