/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/probe_state.h - the probe results as the JSON file `fabricd status`
 * reads (--probe-file, /run/fabricd/probe.json by default).
 */
#ifndef FABRICD_DAEMON_PROBE_STATE_H
#define FABRICD_DAEMON_PROBE_STATE_H

#include <stddef.h>

#include "daemon/probe.h"

/* How writing the file went: failures since the warning, writes since the last failure. */
struct probe_state_health {
	unsigned int failed;
	unsigned int written;
};

/*
 * Writes the n results (the measured ones) to path, whole, then renamed, so
 * a reader never sees half of it. A failure removes the last results (status
 * would show them as this round's) and is logged once, until writes work
 * again for a few rounds in a row (a full file system lets every other one
 * through: the removal makes room for the next).
 */
void probe_state_write(const char *path, const char *cluster, const char *node,
		       unsigned int interval_ms, const struct probe_result *rs, size_t n,
		       struct probe_state_health *health);
/* Marks the file of cluster's node (if it is that) as left by a daemon that stopped. */
void probe_state_mark_stopped(const char *path, const char *cluster, const char *node);
/*
 * Removes path when it holds results of cluster's node (an earlier daemon's,
 * which a daemon without probe rounds would never renew); any other file stays.
 */
void probe_state_forget(const char *path, const char *cluster, const char *node);

#endif
