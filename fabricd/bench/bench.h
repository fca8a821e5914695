/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/bench.h - `fabricd bench`: what secure transport costs against plain VXLAN
 * on this host. The pieces, one file each:
 *   cli/bench.c     options
 *   bench/bench.c         orchestration: signals, the run matrix, cleanup
 *   bench/lab.c     the two-node lab in namespaces, built with fabricd's own apply
 *   bench/labref.c  --reference: the same lab built by hand (ip, bridge, wg)
 *   bench/iperf.c   iperf3 server and client inside the lab, JSON results
 *   bench/sample.c  /proc/stat, /proc/softirqs, /proc/interrupts, /proc/PID/stat
 *   bench/trace.c   bpftrace latency histogram of the encryption function (or why not)
 *   bench/report.c  medians and spread, the text table, JSON
 *   bench/refreport.c  --reference: fabricd / reference per path, text and JSON
 *   bench/profile.c    --reference: netfilter's share of the CPU in both labs, from perf
 *   bench/profreport.c that share per path, text and JSON
 *   bench/svg.c     the chart
 *
 * A run is one iperf3 test on one path at one stream count; a cell is every
 * repeat of one path at one stream count.
 */
#ifndef FABRICD_BENCH_H
#define FABRICD_BENCH_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/options.h"

#define BENCH_MAX_STREAM_COUNTS 8
#define BENCH_MAX_STREAMS	128
#define BENCH_MAX_REPEAT	50
#define BENCH_MAX_DURATION	600
/* Busier than this (percent of all CPUs) before the bench starts: other work skews it. */
#define BENCH_BUSY_WARN 10.0
/* One CPU with at least this share of the NET_RX softirqs or device interrupts is a hotspot. */
#define BENCH_HOTSPOT_SHARE 80.0
/* ...when there are at least this many per second (an idle host is not a hotspot). */
#define BENCH_HOTSPOT_MIN_RATE 1000.0

enum bench_path {
	BENCH_RAW,    /* node to node over the underlay, no overlay */
	BENCH_PLAIN,  /* guest to guest over VXLAN, UDP 4789 on the underlay */
	BENCH_SECURE, /* guest to guest over VXLAN, UDP 4790 inside WireGuard */
	BENCH_N_PATHS,
};

const char *bench_path_name(enum bench_path p);

struct bench_opts {
	unsigned int duration; /* seconds per run */
	unsigned int streams[BENCH_MAX_STREAM_COUNTS];
	size_t n_streams;
	unsigned int repeat;
	const char *json_path; /* NULL: none */
	const char *svg_path;
	bool quick;
	bool verbose;
	bool reference; /* --reference: also the same lab built by hand, runs interleaved */
	enum wg_backend_choice wg_backend;
	/* --control-plane (bench/control_plane.h): 0 = its default size */
	bool control_plane;
	unsigned int nodes, vnis;
};

/* One CPU over one run: percent of that CPU's time, events per second. */
struct bench_cpu {
	double usr, sys, softirq, irq, busy;
	double net_rx, net_tx; /* softirqs per second */
	double irqs;	       /* device interrupts (numbered /proc/interrupts lines) per second */
};

/* One iperf3 run and what the host did meanwhile. */
struct bench_run {
	double gbps;				       /* received payload, Gbit/s (10^9) */
	double bytes;				       /* received payload bytes */
	double seconds;				       /* wall time of the sampled window */
	double host_cpu_pct;			       /* busy share of all CPUs */
	double usr_pct, sys_pct, softirq_pct, irq_pct; /* shares of all CPUs' time */
	double cpu_seconds;			       /* busy CPU seconds, all CPUs together */
	double ctxt_per_s;			       /* context switches per second, host */
	double wg_cpu_pct;  /* WireGuard processes, percent of one CPU; < 0: not measured */
	double retransmits; /* TCP retransmits the sender saw */
	unsigned int n_cpu;
	struct bench_cpu *cpu; /* n_cpu, indexed by CPU number */
};

struct bench_cell {
	enum bench_path path;
	unsigned int streams;
	size_t n_runs;
	struct bench_run *runs; /* capacity: the repeat count */
};

/* The encryption latency histogram, or the one-line reason it is absent. */
struct bench_hist_bucket {
	double low, high; /* nanoseconds; high < 0: open-ended */
	uint64_t count;
};

struct bench_hist {
	bool available;
	char reason[256];  /* when not available */
	char function[64]; /* the probed kernel function */
	size_t n_buckets;
	struct bench_hist_bucket *buckets;
};

/* --reference's netfilter profile (bench/profile.h): extra runs per path and lab under perf */
#define BENCH_PROFILE_MAX_PAIRS 3

/* What perf saw during one run. */
struct bench_profile_run {
	uint64_t samples;	    /* every sample, idle included */
	uint64_t netfilter_samples; /* in netfilter's functions (bench_profile_netfilter_symbol) */
	double cpu_seconds;	    /* the run's busy CPU seconds, all CPUs (/proc/stat) */
};

struct bench_profile {
	bool available;
	char reason[256]; /* when not available */
	unsigned int streams;
	size_t n_pairs;
	struct bench_profile_run fabricd[BENCH_N_PATHS][BENCH_PROFILE_MAX_PAIRS];
	struct bench_profile_run reference[BENCH_N_PATHS][BENCH_PROFILE_MAX_PAIRS];
};

struct bench_results {
	/* what was measured, for the report header and the JSON */
	unsigned int duration, repeat;
	unsigned int streams[BENCH_MAX_STREAM_COUNTS];
	size_t n_streams;
	bool quick;
	unsigned int n_cpu;
	char kernel[96];
	char backend[16];	  /* "kernel" or "userspace" */
	char implementation[128]; /* "wireguard-go v0.0.20220316", "kernel module ..." */
	unsigned int underlay_mtu, fabric_mtu, zone_mtu;
	unsigned int plain_vni, secure_vni;
	double wall_seconds; /* the whole bench */
	double busy_before;  /* host CPU % in the second before the lab was built; < 0: unknown */
	struct bench_hist hist;
	struct bench_profile profile; /* --reference only */
	/* n_streams * BENCH_N_PATHS cells, index bench_cell_index() */
	size_t n_cells;
	struct bench_cell *cells;
	/* --reference: the same matrix measured on the lab built by hand (bench/labref.h) */
	struct bench_results *reference;
};

size_t bench_cell_index(size_t stream_idx, enum bench_path path);
/* Allocates the cells for r->streams/n_streams and r->repeat. 0 or -ENOMEM. */
int bench_results_init(struct bench_results *r);
/* Appends a run to a cell (takes over run->cpu). 0 or -ENOSPC. */
int bench_cell_add(struct bench_cell *c, size_t capacity, struct bench_run *run);
void bench_results_free(struct bench_results *r);

/* --- statistics and reports (bench/report.c) ---------------------------- */
struct bench_stat {
	double median, min, max;
	size_t n; /* 0: no value (e.g. not measured) */
};

/* Median, min and max of v[0..n) (values < 0 are "not measured" and skipped). */
void bench_stat_of(const double *v, size_t n, struct bench_stat *out);

/* A cell reduced to medians over its repeats. */
struct bench_summary {
	enum bench_path path;
	unsigned int streams;
	struct bench_stat gbps, host_cpu, cpu_per_gb, ctxt, wg_cpu, retransmits;
	struct bench_stat usr, sys, softirq, irq;
	double pct_of_raw; /* median over median, < 0 when raw is missing */
	unsigned int n_cpu;
	struct bench_cpu *cpu; /* per-CPU medians */
	/* the single-core hotspot: the CPU with the largest share, and of what */
	bool hotspot;
	int hot_cpu;
	double hot_share;     /* percent */
	const char *hot_what; /* "NET_RX softirqs" or "device interrupts" */
};

/* secure against plain at one stream count (NaN-free: 0 when undefined) */
struct bench_ratio {
	unsigned int streams;
	double gbps, host_cpu, cpu_per_gb, ctxt;
};

/* Summaries of every cell (n_cells of them, same order). NULL when out of memory. */
struct bench_summary *bench_summarize(const struct bench_results *r);
void bench_summaries_free(struct bench_summary *s, size_t n);
void bench_ratio_of(const struct bench_summary *plain, const struct bench_summary *secure,
		    struct bench_ratio *out);

void bench_print_table(const struct bench_results *r, const struct bench_summary *s, FILE *f);

/*
 * --reference: fabricd's lab may cost this much more than the reference and
 * still count as "fabricd adds nothing" (issue 17: 3%): its throughput ratio
 * at least 1 - this, its CPU-per-GB ratio at most 1 + this. A faster or
 * cheaper fabricd lab (it sizes wireguard-go's sockets, wg_tune) is no cost.
 */
#define BENCH_REF_TOLERANCE 0.03

/*
 * fabricd / reference over paired runs (the j-th run of a cell on each lab,
 * measured next to each other): the geometric mean of the run-by-run ratios
 * and its 95% confidence interval, Student's t on their logarithms. Pairing
 * takes out what drifts slowly on the host; the interval says how much the
 * rest of its noise leaves unknown.
 */
struct bench_ci {
	double mean, low, high; /* ratios; low == high == mean when n < 2 */
	double log_sd;		/* standard deviation of the ratios' logarithms */
	size_t n;		/* pairs with a ratio; 0: none */
};

enum bench_verdict {
	BENCH_UNDECIDED, /* the interval straddles the bound, or fewer than 2 pairs */
	BENCH_WITHIN,	 /* the interval lies wholly on the good side of the bound */
	BENCH_OUTSIDE,	 /* the interval lies wholly past it */
};

/* Which way of 1 a ratio is a cost of fabricd's: lower throughput, higher CPU per GB. */
enum bench_worse {
	BENCH_WORSE_LOWER,  /* bound 1 - tolerance */
	BENCH_WORSE_HIGHER, /* bound 1 + tolerance */
};

/* The interval of n ratios (values <= 0 are "not measured" and skipped). */
void bench_ci_of(const double *ratios, size_t n, struct bench_ci *out);
/* "within", "outside" or "undecided", as in the JSON */
const char *bench_verdict_name(enum bench_verdict v);
enum bench_verdict bench_ci_verdict(const struct bench_ci *ci, double tolerance,
				    enum bench_worse worse);
/* Roughly how many pairs in all would decide ci; 0: decided, or nothing to go by (n < 2). */
size_t bench_ci_pairs_needed(const struct bench_ci *ci, double tolerance, enum bench_worse worse);
/* Student's t, two-sided 95%, for df degrees of freedom (df >= 1). */
double bench_t95(size_t df);

/*
 * --reference (bench/refreport.c): fabricd's lab against the same lab built
 * by hand, path by path. s and ref: bench_summarize() of r and of
 * r->reference. The text section, and the JSON object "reference".
 */
void bench_print_reference(const struct bench_results *r, const struct bench_summary *s,
			   const struct bench_summary *ref, FILE *f);
json_t *bench_reference_json(const struct bench_results *r, const struct bench_summary *s,
			     const struct bench_summary *ref);
/* One cell's JSON result object, as in "results" (bench/report.c). */
json_t *bench_result_json(const struct bench_cell *c, const struct bench_summary *x);
/* Writes the JSON report (schemas/bench.schema.json) to path. 0 or -errno. */
int bench_write_json(const struct bench_results *r, const struct bench_summary *s,
		     const char *path);
/*
 * The directory of output file path (option opt; NULL: none) exists and is
 * writable, checked before minutes of measuring (bench/bench.c). 0, or -1 (said).
 */
int bench_check_output(const char *opt, const char *path);
/* The chart as SVG text on f (bench/svg.c). 0 or -EIO. */
int bench_write_svg(const struct bench_results *r, const struct bench_summary *s, FILE *f);

/* --- the run (bench/bench.c) ---------------------------------------------------- */
/* Set by the SIGINT/SIGTERM handler; every wait loop checks it. */
extern volatile sig_atomic_t bench_stop;

/* The whole bench with these options; the process exit status. */
int bench_main(const struct bench_opts *opts);

#endif
