/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/config.h - the cluster definition loader: JSON text -> struct cluster.
 * The only part of fabricd that sees jansson's types. It fails closed: any
 * unknown key, bad value or broken cross-reference is an error, every error
 * is collected (with its JSON path) and no cluster is returned.
 */
#ifndef FABRICD_CONFIG_H
#define FABRICD_CONFIG_H

#include <stddef.h>

#include "base/diag.h"
#include "definition/model.h"

/*
 * Parses and validates a definition. On success returns 0 and *out owns a
 * cluster (free with cluster_free); warnings may still be in diag. On failure
 * returns -EINVAL (or -errno for I/O) with every problem in diag, *out NULL.
 */
int config_load_file(const char *path, struct cluster **out, struct diag *diag);
/* Its hints for a path it cannot open: without -c that is the default path, none "given". */
#define CONFIG_MISSING_HINT                                                                        \
	"give the definition with -c FILE, or make it: `fabricd init -c FILE --cluster NAME "      \
	"--prefix CIDR` (or `fabricd import-pve -o FILE`)"
#define CONFIG_UNREADABLE_HINT "give a definition this user may read with -c FILE"
int config_load_buffer(const char *buf, size_t len, struct cluster **out, struct diag *diag);

/*
 * 0 when text is JSON (any value, no key twice in one object); else -EINVAL
 * and why in d, naming source: a duplicate key by its JSON path ("PATH:
 * appears twice in one object (SOURCE line N); TODO"), any other error by
 * "SOURCE:LINE:COLUMN: invalid JSON: ...; TODO". todo NULL: "keep one", or
 * "fix the syntax at this line and column". For the readers of other JSON
 * files and of a definition that config_load_file does not read.
 */
int config_json_check(const char *text, size_t len, const char *source, const char *todo,
		      struct diag *d);

#endif
