// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_probe_state.c - the probe results file (daemon/probe_state.h): what
 * `fabricd status` reads back (every measured result with its fields, the
 * header, valid JSON with a real rtt or null), a file that cannot be
 * written (counted once, the old file removed), and the memory a round
 * costs the probe thread.
 *
 * The memory: at 64 nodes x 64 zones a round has 4032 results. Built as
 * one JSON tree and dumped through one string, a round left the probe
 * thread's malloc arena 6.5 MiB resident, and the string's doubling
 * buffers made it grow from round to round (+1.9 MiB over 10 rounds here;
 * the control-plane bench saw the daemon grow 1.1 MiB over its reloads).
 * Streamed a result at a time, a round costs next to nothing and the
 * rounds after it nothing more. Resident set sizes mean nothing under
 * AddressSanitizer or valgrind (their allocators keep freed memory): that
 * part is skipped there.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/probe_state.h"
#include "unit.h"

#define ROUND_RESULTS 4032 /* 64 zones x 63 peers */
#define ROUNDS	      10

static struct probe_result results[ROUND_RESULTS];
static char dir[] = "/tmp/fabricd-unit-probe-XXXXXX";

static void fill_results(void)
{
	for (size_t i = 0; i < ROUND_RESULTS; i++) {
		struct probe_result *r = &results[i];

		snprintf(r->target.peer, sizeof(r->target.peer), "peer%zu", i % 63);
		snprintf(r->target.zone, sizeof(r->target.zone), "zone%zu", i / 63);
		snprintf(r->target.bridge, sizeof(r->target.bridge), "vnet%zu", i / 63);
		r->target.transport = i % 2 ? "secure" : "plain";
		r->target.mtu = i % 2 ? 1390 : 1440;
		r->measured = i % 7 != 0; /* a target no round reached yet: left out */
		r->reachable = i % 3 != 0;
		r->black_hole = i % 5 == 0;
		r->largest = r->reachable ? r->target.mtu : 0;
		r->rtt_seconds = 0.00125;
		r->checked_at = 1796600000 + (long long)i;
	}
}

static size_t measured_count(void)
{
	size_t n = 0;

	for (size_t i = 0; i < ROUND_RESULTS; i++)
		n += results[i].measured;
	return n;
}

static void test_read_back(const char *path)
{
	struct probe_state_health health = {0};
	json_error_t err;
	json_t *j, *probes, *third;

	probe_state_write(path, "lab", "pve1", 10000, results, ROUND_RESULTS, &health);
	CHECK_INT(health.failed, 0, "written");
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	CHECK(j != NULL, "%s:%d: %s", path, err.line, err.text);
	if (!j)
		return;
	CHECK_STR(json_string_value(json_object_get(j, "cluster")), "lab", "header");
	CHECK_STR(json_string_value(json_object_get(j, "node")), "pve1", "header");
	CHECK(json_real_value(json_object_get(j, "interval")) == 10.0, "interval in seconds");
	CHECK(json_integer_value(json_object_get(j, "updated")) > 0, "updated");
	probes = json_object_get(j, "probes");
	CHECK_INT(json_array_size(probes), measured_count(), "the measured results");
	third = json_array_get(probes, 2); /* results[3]: the first is not measured */
	CHECK_STR(json_string_value(json_object_get(third, "peer")), "peer3", "peer");
	CHECK_STR(json_string_value(json_object_get(third, "transport")), "secure", "transport");
	CHECK_INT(json_integer_value(json_object_get(third, "mtu")), 1390, "mtu");
	CHECK(json_is_null(json_object_get(third, "rtt_ms")), "no rtt when unreachable");
	CHECK(json_real_value(json_object_get(json_array_get(probes, 0), "rtt_ms")) == 1.25,
	      "rtt in ms");
	CHECK(json_is_true(json_object_get(json_array_get(probes, 4), "black_hole")), "results[5]");
	CHECK_INT(json_object_size(third), 10, "every field");
	json_decref(j);
}

static void test_unwritable(const char *path)
{
	struct probe_state_health health = {0};
	char bad[512];

	snprintf(bad, sizeof(bad), "%s/missing/probe.json", dir);
	probe_state_write(bad, "lab", "pve1", 10000, results, ROUND_RESULTS, &health);
	probe_state_write(bad, "lab", "pve1", 10000, results, ROUND_RESULTS, &health);
	CHECK_INT(health.failed, 2, "each failed round counted (warned once)");
	CHECK(access(path, F_OK) == 0, "another path's file untouched");
}

struct rounds {
	const char *path;
	long before, after_one, after_all;
};

/* In a thread of its own, as the probe's rounds are: its own malloc arena. */
static void *write_rounds(void *arg)
{
	struct rounds *r = arg;
	struct probe_state_health health = {0};

	r->before = unit_resident_kib();
	for (int i = 0; i < ROUNDS; i++) {
		probe_state_write(r->path, "lab", "pve1", 10000, results, ROUND_RESULTS, &health);
		if (!i)
			r->after_one = unit_resident_kib();
	}
	r->after_all = unit_resident_kib();
	return NULL;
}

static void test_round_memory(const char *path)
{
	struct rounds r = {.path = path};
	pthread_t t;

	if (unit_allocator_is_instrumented()) {
		/* the other checks ran: not a skip of the binary */
		printf("round memory: not measured under ASan or valgrind\n");
		return;
	}
	CHECK_INT(pthread_create(&t, NULL, write_rounds, &r), 0, "thread");
	pthread_join(t, NULL);
	printf("probe rounds of %d results: VmRSS %ld -> %ld (one) -> %ld KiB (%d)\n",
	       ROUND_RESULTS, r.before, r.after_one, r.after_all, ROUNDS);
	CHECK(r.after_one - r.before < 1024, "a round cost %ld KiB", r.after_one - r.before);
	CHECK(r.after_all - r.after_one < 256, "rounds 2-%d grew %ld KiB", ROUNDS,
	      r.after_all - r.after_one);
}

int main(void)
{
	char path[512];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/probe.json", dir);
	fill_results();
	test_read_back(path);
	test_unwritable(path);
	test_round_memory(path);
	unlink(path);
	rmdir(dir);
	return unit_summary("test_probe_state");
}
