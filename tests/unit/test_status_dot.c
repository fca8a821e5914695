// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_status_dot.c - `status --dot`'s text stays valid DOT whatever the
 * names: a link label too long for its buffer is cut between lines (a line
 * cut in its middle ended in half an escape, `...ok\"];`, which dot
 * refuses), and a node named "zones" stays a node, apart from the legend.
 *
 * Why status_dot.c is included: the CLI is not in libfabricd.
 */
#include "cli/status_dot.c"

#include "definition/config.h"
#include "unit.h"

static const char def[] =
    "{\"version\": 1, \"cluster\": \"lab\", \"fabric\": {\"prefix\": \"10.255.0.0/24\", "
    "\"listen_port\": 51820}, \"nodes\": ["
    "{\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": \"10.255.0.1\", "
    "\"public_key\": \"oT0zKXEx4tThGhDsMxXEouarKAUC9pxhPmhTWncTW2k=\"}, "
    "{\"name\": \"zones\", \"underlay\": \"192.0.2.12\", \"fabric_address\": \"10.255.0.2\", "
    "\"public_key\": \"Szc7Zp0f/oNtJswocSJRgtc16WggekigRKMdDoKCyEM=\"}], \"zones\": []}";

/* status --json as the node pve1 has it: peer "zones", 11 zones of 34-byte names probed. */
static json_t *status_of(bool stale)
{
	json_t *results = json_array(), *status;

	for (int i = 0; i < 11; i++) {
		char zone[48];

		snprintf(zone, sizeof(zone), "tenant-with-a-long-name-number-%03d", i);
		json_array_append_new(results, json_pack("{s:s, s:s, s:s, s:i, s:b, s:b, s:i}",
							 "peer", "zones", "zone", zone, "transport",
							 "secure", "mtu", 1390, "reachable", 1,
							 "black_hole", 0, "largest", 1390));
	}
	status = json_pack("{s:s, s:{s:[]}, s:[], s:{s:o, s:b}}", "node", "pve1", "fabric", "peers",
			   "zones", "probes", "results", results, "stale", stale);
	return status;
}

static struct {
	char *text;
	size_t len;
} out;

static char *dot_of(json_t *status, const struct cluster *c)
{
	FILE *f = open_memstream(&out.text, &out.len);

	if (!f)
		return NULL;
	status_dot_write(status, c, f);
	fclose(f);
	return out.text;
}

int main(void)
{
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(def, strlen(def), &c, &d), 0, "a node named zones loads");
	diag_free(&d);
	if (!c)
		return unit_summary("test_status_dot");
	for (int stale = 0; stale < 2; stale++) {
		json_t *status = status_of(stale);
		char *text = dot_of(status, c),
		     *edge = text ? strstr(text, "\"pve1\" -- \"zones\"") : NULL;
		char *end = edge ? strstr(edge, "\"];\n") : NULL;

		CHECK(edge && end, "the link to the peer: %s", text ? text : "");
		if (end) {
			CHECK(end[-1] != '\\' || end[-2] == '\\',
			      "no label ends in half an escape: %.*s", (int)(end - edge + 4), edge);
			CHECK(!strncmp(end - 5, "\\n...", 5), "the cut is said: %.*s",
			      (int)(end - edge + 4), edge);
		}
		CHECK(text && strstr(text, "tenant-with-a-long-name-number-000 secure 1390: ok"),
		      "whole lines before the cut");
		CHECK(!stale || (text && strstr(text, "1390: ok (stale)")), "stale results say so");
		CHECK(text && strstr(text, "\"zones legend\" [id=\"zones\", shape=note"),
		      "the legend is a node of its own");
		CHECK(text && strstr(text, "\"zones\" [id=\"node-zones\""),
		      "node zones stays a node");
		free(text);
		json_decref(status);
	}
	cluster_free(c);
	return unit_summary("test_status_dot");
}
