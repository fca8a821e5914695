// SPDX-License-Identifier: GPL-2.0-or-later
/* cli/status_probe.c - the probe results of `fabricd run`, read back for `status`. */
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/status_probe.h"

/* Results older than this many rounds (and a minute) are the last words of a stopped daemon. */
#define STALE_ROUNDS 3
#define STALE_MIN_S  60

static bool has_zone(const struct cluster *c, const char *name)
{
	for (size_t i = 0; name && i < c->n_zones; i++)
		if (!strcmp(c->zones[i].name, name))
			return true;
	return false;
}

/*
 * The results for peers and zones the definition still has: a node renamed
 * or removed kept its last result in status until the daemon's next round
 * (a minute at most), beside nothing for its new name.
 */
static json_t *current_results(json_t *results, const struct cluster *c)
{
	json_t *kept = json_array(), *r;
	size_t i;

	json_array_foreach(results, i, r)
	{
		const char *peer = json_string_value(json_object_get(r, "peer"));

		if (peer && cluster_find_node(c, peer) >= 0 &&
		    has_zone(c, json_string_value(json_object_get(r, "zone"))))
			json_array_append(kept, r);
	}
	return kept;
}

/*
 * The probe results in path, or NULL; a file there that is not the results
 * `fabricd run` writes (not JSON, no "probes" array, a directory) is said, with what to do:
 * status would otherwise say only "probes: none".
 */
static json_t *read_results(const char *path)
{
	static const char todo[] = "not the probe results `fabricd run` writes: give the "
				   "--probe-file that run writes, or remove this file";
	json_error_t jerr;
	struct stat st;
	json_t *j;

	/* a directory: "remove this file" (until 2026-12-07) was not what to do */
	if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		log_warn("%s: a directory, not the probe results `fabricd run` writes: give the "
			 "--probe-file that run writes (a file; " FABRICD_DEFAULT_PROBE_FILE
			 " when run has no --probe-file)",
			 path, netns_inode());
		return NULL;
	}
	j = path ? json_load_file(path, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!j && path && access(path, F_OK) == 0)
		log_warn("%s:%d:%d: %s: %s", path, jerr.line, jerr.column, jerr.text, todo);
	else if (j && !json_is_array(json_object_get(j, "probes")))
		log_warn("%s: no \"probes\" array: %s", path, todo);
	return j;
}

json_t *status_probes_json(const struct options *o, const struct cluster *c, const char *node)
{
	const char *cluster = c->name;
	json_t *j = read_results(o->probe_file);
	json_t *results = json_object_get(j, "probes");
	json_int_t updated = json_integer_value(json_object_get(j, "updated"));
	double interval = json_number_value(json_object_get(j, "interval"));
	long long age = (long long)time(NULL) - (long long)updated;
	double stale_after =
	    interval * STALE_ROUNDS > STALE_MIN_S ? interval * STALE_ROUNDS : STALE_MIN_S;
	json_t *out;

	if (!json_is_array(results) ||
	    strcmp(json_string_value(json_object_get(j, "cluster")) ?: "", cluster) ||
	    strcmp(json_string_value(json_object_get(j, "node")) ?: "", node)) {
		json_decref(j);
		return json_null();
	}
	/* stale: old, or left by a daemon that stopped (probe_state_mark_stopped) */
	out = json_pack("{s:s, s:I, s:I, s:b, s:o}", "file", o->probe_file, "updated", updated,
			"age", (json_int_t)age, "stale",
			age > stale_after || json_is_true(json_object_get(j, "stopped")), "results",
			current_results(results, c));
	json_decref(j);
	return out ? out : json_null();
}

void status_probes_print(json_t *probes, const char *node)
{
	json_t *r;
	size_t i;

	if (!json_is_object(probes)) {
		printf("probes: none (fabricd run is not running here, runs with "
		       "--probe-interval 0, has another --probe-file, or cannot write it: its log "
		       "says)\n");
		return;
	}
	printf("probes (by fabricd run, %llds ago",
	       (long long)json_integer_value(json_object_get(probes, "age")));
	if (json_is_true(json_object_get(probes, "stale")))
		printf(", STALE: is it still running, and can it write %s?",
		       json_string_value(json_object_get(probes, "file")));
	printf("):\n");
	json_array_foreach(json_object_get(probes, "results"), i, r)
	{
		const char *peer = json_string_value(json_object_get(r, "peer"));
		long long mtu = json_integer_value(json_object_get(r, "mtu"));
		long long largest = json_integer_value(json_object_get(r, "largest"));

		printf("  %s -> %s, zone %s (%s): ", node, peer,
		       json_string_value(json_object_get(r, "zone")),
		       json_string_value(json_object_get(r, "transport")));
		if (!json_is_true(json_object_get(r, "reachable")))
			printf("UNREACHABLE: no probe comes back\n");
		else if (json_is_true(json_object_get(r, "black_hole")))
			printf("MTU BLACK HOLE: %lld-byte frames are lost, %lld bytes pass "
			       "(rtt %.2f ms)\n",
			       mtu, largest, json_number_value(json_object_get(r, "rtt_ms")));
		else
			printf("ok, %lld-byte frames pass, rtt %.2f ms\n", mtu,
			       json_number_value(json_object_get(r, "rtt_ms")));
	}
}

void status_probes_forget(const struct options *o, const char *cluster)
{
	json_t *j = o->probe_file && cluster ? json_load_file(o->probe_file, 0, NULL) : NULL;
	const char *owner = json_string_value(json_object_get(j, "cluster"));

	if (owner && !strcmp(owner, cluster) && unlink(o->probe_file) < 0 && errno != ENOENT)
		log_warn("cannot remove the probe results %s: %s; `fabricd status` shows them "
			 "(stale) until it is removed",
			 o->probe_file, strerror(errno));
	json_decref(j);
}
