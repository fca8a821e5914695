/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/probe_state.h - the probe results as the JSON file `fabricd status`
 * reads (--probe-file, /run/fabricd/probe.json by default).
 */
#ifndef FABRICD_DAEMON_PROBE_STATE_H
#define FABRICD_DAEMON_PROBE_STATE_H

#include <stddef.h>

#include "daemon/probe.h"

/*
 * Writes the n results (the measured ones) to path, whole, then renamed, so
 * a reader never sees half of it. A failure is logged once until a write
 * works again; *failed counts them.
 */
void probe_state_write(const char *path, const char *cluster, const char *node,
		       unsigned int interval_ms, const struct probe_result *rs, size_t n,
		       unsigned int *failed);
/* Marks the file of cluster's node (if it is that) as left by a daemon that stopped. */
void probe_state_mark_stopped(const char *path, const char *cluster, const char *node);

#endif
