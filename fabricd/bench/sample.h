/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.h - snapshots of the host's counters (/proc/stat,
 * /proc/softirqs, /proc/interrupts and /proc/PID/stat of the WireGuard
 * processes) and the difference of two snapshots as one bench_run.
 */
#ifndef FABRICD_BENCH_SAMPLE_H
#define FABRICD_BENCH_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/bench.h"

/* /proc/stat cpu fields, in the kernel's order (guest time is already in user) */
enum {
	CPUF_USER,
	CPUF_NICE,
	CPUF_SYSTEM,
	CPUF_IDLE,
	CPUF_IOWAIT,
	CPUF_IRQ,
	CPUF_SOFTIRQ,
	CPUF_STEAL,
	CPUF_N,
};

struct bench_snap {
	double t;	    /* CLOCK_MONOTONIC seconds */
	unsigned int n_cpu; /* array size: CPU numbers 0..n_cpu-1 */
	uint64_t total[CPUF_N];
	uint64_t (*cpu)[CPUF_N];
	uint64_t ctxt;
	uint64_t *net_rx, *net_tx; /* softirq counts per CPU */
	uint64_t *irqs;		   /* device interrupts per CPU */
	uint64_t proc_ticks;	   /* utime + stime of the watched processes */
	bool proc_ok;		   /* every watched process was read */
};

/* Allocates arrays for n_cpu CPUs (zeroed). 0 or -ENOMEM. */
int bench_snap_init(struct bench_snap *s, unsigned int n_cpu);
void bench_snap_free(struct bench_snap *s);

/* Reads every counter now; pids (may be empty) are the processes whose CPU time is summed. */
int bench_snap_take(struct bench_snap *s, const pid_t *pids, size_t n_pids);

/*
 * The run's host figures from two snapshots of the same size: CPU shares,
 * CPU seconds, context switches and events per second, per-CPU detail
 * (run->cpu is allocated; the iperf3 fields are left alone). 0 or -errno.
 */
int bench_snap_delta(const struct bench_snap *a, const struct bench_snap *b, bool watch_procs,
		     struct bench_run *run);

/* The parsers, on the text of the file; exposed for the unit tests. 0 or -EINVAL. */
int bench_parse_stat(const char *text, struct bench_snap *s);
int bench_parse_softirqs(const char *text, struct bench_snap *s);
int bench_parse_interrupts(const char *text, struct bench_snap *s);
/* utime + stime (fields 14 and 15) of one /proc/PID/stat line. */
int bench_parse_pid_stat(const char *text, uint64_t *ticks);
/* pid's CPU time so far (its threads' too), in clock ticks; -1 when unreadable (gone). */
long long bench_pid_cpu_ticks(pid_t pid);

/* The whole of a (proc) file as a NUL-terminated string; free() it. NULL and errno set. */
char *bench_read_text(const char *path);
/* The first line of a log file into buf, for an error message ("(no output)" if none). */
void bench_first_line(const char *path, char *buf, size_t len);

#endif
