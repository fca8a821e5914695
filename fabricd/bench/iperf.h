/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iperf.h - one measured run: Debian's iperf3 as a one-off server on
 * the receiving side of a path and as the client (-J, JSON) on the sending
 * side, both started by fork + setns + exec inside the lab, with the host's
 * counters sampled just before the client starts and just after it ends.
 */
#ifndef FABRICD_BENCH_IPERF_H
#define FABRICD_BENCH_IPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bench/bench.h"
#include "bench/lab.h"

#define BENCH_IPERF3 "iperf3"

/*
 * Runs iperf3 on path with streams parallel streams for seconds. watch[]
 * are the WireGuard processes whose CPU time is measured (watching false:
 * none, e.g. kernel WireGuard). Fills run (run->cpu allocated). 0 or -1
 * (logged; -EINTR when the bench was interrupted).
 */
int bench_iperf_run(const struct bench_lab *lab, enum bench_path path, unsigned int streams,
		    unsigned int seconds, const pid_t *watch, size_t n_watch, bool watching,
		    struct bench_run *run);

/*
 * Parses the client's -J output: received bytes, Gbit/s, retransmits.
 * 0, or -EINVAL with a reason in err (iperf3's own "error" when it gave one).
 */
int bench_iperf_parse(const char *json_text, struct bench_run *run, char *err, size_t errlen);

#endif
