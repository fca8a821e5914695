// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/probe_state.c - the probe results as the JSON file `fabricd status`
 * reads; its fields are the README's ("The data-path probe").
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "daemon/probe_state.h"

static json_t *results_json(const char *cluster, const char *node, unsigned int interval_ms,
			    const struct probe_result *rs, size_t n)
{
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct probe_result *r = &rs[i];

		if (!r->measured)
			continue;
		json_array_append_new(
		    list,
		    json_pack("{s:s, s:s, s:s, s:s, s:I, s:b, s:b, s:I, s:o, s:I}", "peer",
			      r->target.peer, "zone", r->target.zone, "transport",
			      r->target.transport, "bridge", r->target.bridge, "mtu",
			      (json_int_t)r->target.mtu, "reachable", r->reachable, "black_hole",
			      r->black_hole, "largest", (json_int_t)r->largest, "rtt_ms",
			      r->reachable ? json_real(r->rtt_seconds * 1000.0) : json_null(),
			      "checked_at", (json_int_t)r->checked_at));
	}
	return json_pack("{s:s, s:s, s:I, s:f, s:o}", "cluster", cluster, "node", node, "updated",
			 (json_int_t)time(NULL), "interval", interval_ms / 1000.0, "probes", list);
}

/* j into path in one rename (status never reads half a file). 0 or -errno. */
static int dump_atomically(const char *path, const json_t *j)
{
	char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	int ret = text ? write_file_atomic(path, text, strlen(text), 0644, false) : -ENOMEM;

	free(text);
	return ret;
}

/* Writes in a row that make a failure over. */
#define WRITTEN_AGAIN_ROUNDS 3

void probe_state_write(const char *path, const char *cluster, const char *node,
		       unsigned int interval_ms, const struct probe_result *rs, size_t n,
		       struct probe_state_health *health)
{
	json_t *j = results_json(cluster, node, interval_ms, rs, n);
	int ret = dump_atomically(path, j);

	json_decref(j);
	if (ret < 0) {
		/* the last round's results would pass for this one's in status: none instead */
		if (unlink(path) < 0 && errno != ENOENT)
			log_debug("probe: cannot remove %s: %s", path, strerror(errno));
		health->written = 0;
		if (!health->failed++)
			log_warn("probe: cannot write %s: %s; `fabricd status` shows no probes "
				 "until it can (the metrics still have them)",
				 path, strerror(-ret));
		return;
	}
	if (health->failed && ++health->written >= WRITTEN_AGAIN_ROUNDS) {
		log_info("probe: %s written again; `fabricd status` shows the probes", path);
		health->failed = health->written = 0;
	}
}

/* The results in path when they are cluster's node's (a daemon's own), else NULL. */
static json_t *own_results(const char *path, const char *cluster, const char *node)
{
	json_t *j = json_load_file(path, 0, NULL);
	const char *c = json_string_value(json_object_get(j, "cluster"));
	const char *n = json_string_value(json_object_get(j, "node"));

	if (c && n && !strcmp(c, cluster) && !strcmp(n, node))
		return j;
	json_decref(j);
	return NULL;
}

void probe_state_forget(const char *path, const char *cluster, const char *node)
{
	json_t *j = own_results(path, cluster, node);

	/* only this node's results, as down removes them: never a file of another kind */
	if (j && unlink(path) < 0 && errno != ENOENT)
		log_warn("probe: cannot remove %s, an earlier daemon's results: %s", path,
			 strerror(errno));
	json_decref(j);
}

void probe_state_mark_stopped(const char *path, const char *cluster, const char *node)
{
	json_t *j = own_results(path, cluster, node);

	/* only this daemon's own results: status then calls them stale at once */
	if (j && json_object_set_new(j, "stopped", json_true()) == 0)
		dump_atomically(path, j);
	json_decref(j);
}
