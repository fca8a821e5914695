/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli/status_probe.h - the data-path probe results `fabricd run` wrote
 * (--probe-file), for `status` (text, --json) and its picture (--dot, --svg).
 */
#ifndef FABRICD_CLI_STATUS_PROBE_H
#define FABRICD_CLI_STATUS_PROBE_H

#include <jansson.h>

#include "definition/model.h"
#include "engine/options.h"

/*
 * {"file", "updated", "age", "stale", "results": [...]} for this cluster and
 * node (results only for peers and zones c still has), or JSON null when the
 * file is absent or belongs to another node.
 */
json_t *status_probes_json(const struct options *o, const struct cluster *c, const char *node);
/* The text lines of status: one per peer and zone, problems in capitals. */
void status_probes_print(json_t *probes, const char *node);
/*
 * For down: removes the probe file when it holds cluster's results, which
 * would otherwise show paths of a fabric that is gone as "ok" in status.
 */
void status_probes_forget(const struct options *o, const char *cluster);

#endif
