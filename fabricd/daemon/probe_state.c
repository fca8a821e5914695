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

/* What one round writes: the header and the measured results. */
struct round {
	const char *cluster, *node;
	unsigned int interval_ms;
	const struct probe_result *rs;
	size_t n;
};

/* 6 digits: a round trip to the microsecond (jansson's 17 printed 0.13699999999999998) */
#define PROBE_JSON_FLAGS                                                                           \
	(JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6))

static json_t *result_json(const struct probe_result *r)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:b, s:b, s:I, s:o, s:I}", "peer",
			 r->target.peer, "zone", r->target.zone, "transport", r->target.transport,
			 "bridge", r->target.bridge, "mtu", (json_int_t)r->target.mtu, "reachable",
			 r->reachable, "black_hole", r->black_hole, "largest",
			 (json_int_t)r->largest, "rtt_ms",
			 r->reachable ? json_real(r->rtt_seconds * 1000.0) : json_null(),
			 "checked_at", (json_int_t)r->checked_at);
}

/* v (taken) as JSON after text; -1 when it could not be made or written. */
static int put(FILE *f, const char *text, json_t *v)
{
	int ret = v && fputs(text, f) >= 0 && json_dumpf(v, f, PROBE_JSON_FLAGS) == 0 ? 0 : -1;

	json_decref(v);
	return ret;
}

/* The round as one JSON object, a result at a time (never all of it in memory). */
static int put_round(FILE *f, const struct round *r)
{
	const char *sep = "\n    ";

	if (put(f, "{\n  \"cluster\": ", json_string(r->cluster)) < 0 ||
	    put(f, ",\n  \"node\": ", json_string(r->node)) < 0 ||
	    put(f, ",\n  \"updated\": ", json_integer((json_int_t)time(NULL))) < 0 ||
	    put(f, ",\n  \"interval\": ", json_real(r->interval_ms / 1000.0)) < 0 ||
	    fputs(",\n  \"probes\": [", f) < 0)
		return -1;
	for (size_t i = 0; i < r->n; i++) {
		if (!r->rs[i].measured)
			continue;
		if (put(f, sep, result_json(&r->rs[i])) < 0)
			return -1;
		sep = ",\n    ";
	}
	return fputs("\n  ]\n}\n", f) < 0 ? -1 : 0;
}

/* A file's content written by put_content(f, ctx) through stdio into fd (4 KiB pieces). */
static int fill_stdio(int fd, int (*put_content)(FILE *f, const void *ctx), const void *ctx)
{
	int copy = dup(fd), ret;
	FILE *f = copy < 0 ? NULL : fdopen(copy, "w");

	if (!f) {
		ret = -errno;
		if (copy >= 0)
			close(copy);
		return ret;
	}
	errno = 0;
	ret = put_content(f, ctx) < 0 ? -(errno ? errno : ENOMEM) : 0;
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	return ret;
}

static int put_round_cb(FILE *f, const void *ctx)
{
	return put_round(f, ctx);
}

static int put_tree_cb(FILE *f, const void *ctx)
{
	return json_dumpf(ctx, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}

/*
 * The results stream into the file: a round's JSON made whole first (a tree,
 * then one string from json_dumps) grew the daemon's resident set by a
 * megabyte over 1000 reloads at 64 nodes x 1024 vnets (the probe thread's
 * malloc arena kept what a 4032-result round had needed: README, "Scale").
 */
static int fill_round(int fd, const void *ctx)
{
	return fill_stdio(fd, put_round_cb, ctx);
}

static int fill_tree(int fd, const void *ctx)
{
	return fill_stdio(fd, put_tree_cb, ctx);
}

/* j into path in one rename (status never reads half a file). 0 or -errno. */
static int dump_atomically(const char *path, const json_t *j)
{
	return j ? write_file_atomic_fill(path, 0644, false, fill_tree, j) : -ENOMEM;
}

/* Writes in a row that make a failure over. */
#define WRITTEN_AGAIN_ROUNDS 3

void probe_state_write(const char *path, const char *cluster, const char *node,
		       unsigned int interval_ms, const struct probe_result *rs, size_t n,
		       struct probe_state_health *health)
{
	struct round round = {cluster, node, interval_ms, rs, n};
	int ret = write_file_atomic_fill(path, 0644, false, fill_round, &round);

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
