/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile.h - --reference's netfilter profile: how much of the host's busy
 * CPU goes to netfilter (the hook traversal and nf_tables' rules) in each
 * lab, from perf's samples of every CPU during extra runs. The reference
 * lab has no table of its own, so fabricd's share minus the reference's is
 * what the guard costs, measured to a tenth of a percent where the
 * throughput ratios cannot tell 1 % from the host's noise.
 */
#ifndef FABRICD_BENCH_PROFILE_H
#define FABRICD_BENCH_PROFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bench/bench.h"

#define BENCH_PROFILE_PERF "perf"
/* perf's cpu-clock period, in ns: 4000 samples per CPU and second */
#define BENCH_PROFILE_PERIOD_NS 250000
/*
 * How long perf record may take to start recording, in s: it first describes
 * every running process; under QEMU's emulation (the kernel WireGuard tier)
 * that took 9 s (0.1-0.2 s on a host). It is working all that time: one
 * that uses no CPU for BENCH_PROFILE_IDLE_S is stuck, and not waited for.
 */
#define BENCH_PROFILE_START_S 30
#define BENCH_PROFILE_IDLE_S  3

/* netfilter's share of a run's busy CPU, percent; < 0 when the run had no busy time. */
double bench_profile_share(const struct bench_profile_run *run);

/* Whether sym (as perf report prints it) is netfilter's hook traversal or nf_tables'. */
bool bench_profile_netfilter_symbol(const char *sym);

/*
 * Parses `perf report --stdio --sort sym -F sample,sym` ("  123  [k] nft_do_chain"
 * lines) into run's sample counts. 0, or -EINVAL when there is no sample line.
 */
int bench_profile_parse(const char *text, struct bench_profile_run *run);

/* Whether perf can be used here; when not, why (one line) in why. */
bool bench_profile_possible(char *why, size_t len);

/*
 * Starts `perf record` of every CPU into data_path (its messages into
 * log_path) and waits until it records. The PID, or -errno (why filled).
 */
pid_t bench_profile_start(const char *data_path, const char *log_path, char *why, size_t len);

/*
 * Stops it, reads its samples back with `perf report` (text into
 * report_path) and adds the counts to run. 0 or -errno (why filled).
 */
int bench_profile_stop(pid_t pid, const char *data_path, const char *report_path,
		       struct bench_profile_run *run, char *why, size_t len);

/* --- the report (bench/profreport.c) ------------------------------------ */

/* One path's profile over its pairs: shares of busy CPU in percent. */
struct bench_profile_path {
	struct bench_stat fabricd, reference;
	struct bench_stat own; /* fabricd's share minus the reference's, pair by pair */
	uint64_t fabricd_samples, reference_samples; /* netfilter samples, all pairs */
	enum bench_verdict verdict; /* own under the tolerance in every pair, over in every pair */
};

void bench_profile_path_of(const struct bench_profile *pr, enum bench_path path,
			   struct bench_profile_path *out);
/* The section under --reference's table, or the line saying why there is none. */
void bench_print_profile(const struct bench_profile *pr, FILE *f);
/* The JSON object "profile" of "reference" (schemas/bench.schema.json). */
json_t *bench_profile_json(const struct bench_profile *pr);

#endif
