// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/bench.c - `fabricd bench`: build the lab, measure every path at every
 * stream count, repeat, tear the lab down (also on SIGINT/SIGTERM), report.
 *
 * Runs are interleaved (repeat by repeat, and within a repeat path by path)
 * so that drift on the host (another job, thermal limits) spreads over all
 * paths instead of biasing the last one measured.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/iperf.h"
#include "bench/lab.h"
#include "bench/profile.h"
#include "bench/sample.h"
#include "bench/trace.h"
#include "base/log.h"
#include "kmod/probe.h"

volatile sig_atomic_t bench_stop;

static void on_signal(int sig)
{
	bench_stop = sig;
}

static const int handled[] = {SIGINT, SIGTERM, SIGHUP};

static void install_handlers(struct sigaction *old)
{
	struct sigaction sa;
	sigset_t unblock;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&unblock);
	/* no SA_RESTART: a blocking wait returns EINTR and sees bench_stop at once */
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
		sigaction(handled[i], NULL, &old[i]);
		/* started with SIGINT or SIGHUP ignored (nohup, a script's "&"): keep it so */
		if (handled[i] != SIGTERM && old[i].sa_handler == SIG_IGN)
			continue;
		sigaction(handled[i], &sa, NULL);
		/* an inherited blocked mask would hold a stop request back forever */
		sigaddset(&unblock, handled[i]);
	}
	sigprocmask(SIG_UNBLOCK, &unblock, NULL);
}

static void restore_handlers(const struct sigaction *old)
{
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaction(handled[i], &old[i], NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bench_check_output(const char *opt, const char *path)
{
	struct stat st;
	char copy[4096];

	if (!path)
		return 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		log_error("bench: %s %s: is a directory: give the path of a file to write", opt,
			  path);
		return -1;
	}
	snprintf(copy, sizeof(copy), "%s", path);
	if (access(dirname(copy), W_OK) < 0) {
		log_error("bench: %s %s: cannot write in its directory (%s): give a writable path",
			  opt, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* "wireguard-go v0.0.20220316" or "kernel module 1.0.0" for the report. */
static void implementation(const struct bench_lab *lab, char *buf, size_t len)
{
	char path[128], *text = NULL, *argv[] = {"wireguard-go", "--version", NULL};
	int fd;
	pid_t pid;

	if (lab->backend == WG_BACKEND_KERNEL) {
		text = bench_read_text("/sys/module/wireguard/version");
		if (text)
			text[strcspn(text, "\n")] = '\0';
		snprintf(buf, len,
			 "kernel module%s%s (no process: its CPU time is in sys and soft)",
			 text ? " " : "", text ? text : "");
		free(text);
		return;
	}
	snprintf(buf, len, "wireguard-go");
	snprintf(path, sizeof(path), "%s/wireguard-go.version", lab->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	pid = lab_spawn(lab, LAB_HOST, argv, fd, -1);
	close(fd);
	if (pid > 0 && lab_wait(pid, 3000) == 0 && (text = bench_read_text(path)) &&
	    !strncmp(text, "wireguard-go ", 13)) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(buf, len, "%s", text);
	}
	free(text);
	unlink(path);
}

static void fill_header(struct bench_results *r, const struct bench_opts *o,
			const struct bench_lab *lab)
{
	struct utsname u;

	r->duration = o->duration;
	r->repeat = o->repeat;
	memcpy(r->streams, o->streams, sizeof(r->streams));
	r->n_streams = o->n_streams;
	r->quick = o->quick;
	r->n_cpu = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0)
		snprintf(r->kernel, sizeof(r->kernel), "%s", u.release);
	snprintf(r->backend, sizeof(r->backend), "%s", wg_backend_name(lab->backend));
	r->underlay_mtu = LAB_UNDERLAY_MTU;
	r->plain_vni = LAB_PLAIN_VNI;
	r->secure_vni = LAB_SECURE_VNI;
}

/* How busy the host is without the bench: one second of /proc/stat. */
static double busy_before(void)
{
	unsigned int n_cpu = (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	struct bench_snap a, b;
	struct bench_run run = {0};
	struct timespec one = {1, 0};
	double busy = -1;

	if (bench_snap_init(&a, n_cpu) < 0)
		return -1;
	if (bench_snap_init(&b, n_cpu) == 0) {
		if (bench_snap_take(&a, NULL, 0) == 0 && nanosleep(&one, NULL) == 0 &&
		    bench_snap_take(&b, NULL, 0) == 0 && bench_snap_delta(&a, &b, false, &run) == 0)
			busy = run.host_cpu_pct;
		bench_snap_free(&b);
	}
	bench_snap_free(&a);
	free(run.cpu);
	return busy;
}

/* One lab and the results measured on it: fabricd's, or --reference's. */
struct bench_side {
	const struct bench_lab *lab;
	struct bench_results *r;
	pid_t wg[LAB_MAX_PROCS];
	size_t n_wg;
};

/* One recorded run of path p at streams[si] on side x; 0, -EINTR or -1. */
static int measure_run(const struct bench_opts *o, const struct bench_side *x, size_t si, int p,
		       size_t *done, size_t total)
{
	bool watching = x->lab->backend == WG_BACKEND_USERSPACE && x->n_wg > 0;
	struct bench_run run = {0};
	struct bench_cell *c = &x->r->cells[bench_cell_index(si, p)];
	int ret =
	    bench_iperf_run(x->lab, p, o->streams[si], o->duration, x->wg, x->n_wg, watching, &run);

	if (ret < 0) {
		free(run.cpu);
		return ret;
	}
	fprintf(stderr, "[%3zu/%zu] %-6s %3u stream%s %8.2f Gbit/s, host CPU %5.1f%%%s\n", ++*done,
		total, bench_path_name(p), o->streams[si], o->streams[si] == 1 ? " " : "s",
		run.gbps, run.host_cpu_pct, x->lab->reference ? " (reference)" : "");
	bench_cell_add(c, o->repeat, &run);
	free(run.cpu);
	return 0;
}

/*
 * The measured matrix on every side; 0, -EINTR or -1. With a reference, each
 * cell's runs alternate between the labs, which goes first changing from
 * one cell to the next, so that drift on the host biases neither.
 */
static int measure(const struct bench_opts *o, const struct bench_side *sides, size_t n_sides)
{
	size_t total = o->repeat * o->n_streams * BENCH_N_PATHS * n_sides, done = 0, k = 0;

	/* one short unrecorded run per path: proves the path and warms it (handshake, ARP) */
	for (size_t x = 0; x < n_sides; x++) {
		for (int p = 0; p < BENCH_N_PATHS; p++) {
			struct bench_run run = {0};
			int ret = bench_iperf_run(sides[x].lab, p, 1, 1, sides[x].wg, sides[x].n_wg,
						  false, &run);

			free(run.cpu);
			if (ret < 0)
				return ret;
		}
	}
	for (unsigned int rep = 0; rep < o->repeat; rep++) {
		for (size_t si = 0; si < o->n_streams; si++) {
			for (int p = 0; p < BENCH_N_PATHS; p++, k++) {
				for (size_t x = 0; x < n_sides; x++) {
					int ret = measure_run(o, &sides[(x + k) % n_sides], si, p,
							      &done, total);

					if (ret < 0)
						return ret;
				}
			}
		}
	}
	return 0;
}

/* One run of path p on side x under perf into out; 0, -EINTR or -errno (why filled). */
static int profile_run(const struct bench_opts *o, const struct bench_side *x, int p,
		       struct bench_profile_run *out, char *why, size_t len)
{
	char data[96], log[96], text[96];
	struct bench_run run = {0};
	pid_t pid;
	int ret;

	snprintf(data, sizeof(data), "%s/perf.data", x->lab->dir);
	snprintf(log, sizeof(log), "%s/perf.log", x->lab->dir);
	snprintf(text, sizeof(text), "%s/perf.txt", x->lab->dir);
	pid = bench_profile_start(data, log, why, len);
	if (pid < 0)
		return bench_stop ? -EINTR : pid;
	ret = bench_iperf_run(x->lab, p, o->streams[0], o->duration, x->wg, x->n_wg, false, &run);
	free(run.cpu);
	if (ret < 0) {
		kill(pid, SIGKILL);
		lab_wait(pid, 1000);
		snprintf(why, len, "the %s run under perf failed (above)", bench_path_name(p));
		return ret;
	}
	out->cpu_seconds = run.cpu_seconds;
	return bench_profile_stop(pid, data, text, out, why, len);
}

/*
 * --reference's netfilter profile: pairs of extra runs per path at the first
 * stream count under perf, kept out of the table as perf costs CPU itself;
 * which lab goes first alternates as in measure(). 0 or -EINTR; a perf
 * that fails leaves the profile unavailable with the reason.
 */
static int profile(const struct bench_opts *o, const struct bench_side *sides,
		   struct bench_profile *pr)
{
	size_t k = 0;

	if (!bench_profile_possible(pr->reason, sizeof(pr->reason)))
		return 0;
	pr->streams = o->streams[0];
	pr->n_pairs = o->repeat < BENCH_PROFILE_MAX_PAIRS ? o->repeat : BENCH_PROFILE_MAX_PAIRS;
	fprintf(stderr, "netfilter profile: %zu more run%s per path and lab under perf\n",
		pr->n_pairs, pr->n_pairs == 1 ? "" : "s");
	for (size_t pair = 0; pair < pr->n_pairs; pair++) {
		for (int p = 0; p < BENCH_N_PATHS; p++, k++) {
			for (size_t i = 0; i < 2; i++) {
				const struct bench_side *x = &sides[(i + k) % 2];
				struct bench_profile_run *slot = x->lab->reference
								     ? &pr->reference[p][pair]
								     : &pr->fabricd[p][pair];
				int ret =
				    profile_run(o, x, p, slot, pr->reason, sizeof(pr->reason));

				if (ret == -EINTR || bench_stop)
					return -EINTR;
				if (ret < 0) {
					log_warn("bench: no netfilter profile: %s", pr->reason);
					return 0;
				}
			}
		}
	}
	pr->available = true;
	return 0;
}

/* An extra secure run under bpftrace, so the probes' own cost stays out of the table. */
static void histogram(const struct bench_opts *o, const struct bench_lab *lab,
		      struct bench_results *r)
{
	char out[128];
	struct bench_run run = {0};
	pid_t pid;

	snprintf(out, sizeof(out), "%s/bpftrace.out", lab->dir);
	fprintf(stderr, "encryption latency: one more secure run under bpftrace\n");
	pid = bench_trace_start(out, &r->hist);
	if (pid < 0)
		return;
	bench_iperf_run(lab, BENCH_SECURE, 1, o->duration, NULL, 0, false, &run);
	free(run.cpu);
	bench_trace_stop(pid, out, &r->hist);
}

static int report(const struct bench_opts *o, struct bench_results *r)
{
	struct bench_summary *s = bench_summarize(r);
	int ret = 0, err;
	FILE *f;

	if (!s) {
		log_error("bench: out of memory");
		return 1;
	}
	bench_print_table(r, s, stdout);
	fflush(stdout);
	if (o->json_path) {
		err = bench_write_json(r, s, o->json_path);
		if (err < 0) {
			log_error("bench: cannot write --json %s: %s", o->json_path,
				  strerror(-err));
			ret = 1;
		}
	}
	if (o->svg_path) {
		f = fopen(o->svg_path, "we");
		err = f ? bench_write_svg(r, s, f) : -errno;
		if (f && fclose(f) != 0 && !err)
			err = -errno;
		if (err < 0) {
			log_error("bench: cannot write --svg %s: %s", o->svg_path, strerror(-err));
			ret = 1;
		}
	}
	bench_summaries_free(s, r->n_cells);
	return ret;
}

static const struct {
	const char *name, *package;
} ref_tools[] = {{"ip", "iproute2"}, {"bridge", "iproute2"}, {"wg", "wireguard-tools"}};

/* What must hold before anything is built; 0 or -1 (logged). */
static int preflight(const struct bench_opts *o, enum wg_backend *backend)
{
	struct kmod_caps caps;
	char err[256];

	if (bench_check_output("--json", o->json_path) < 0 ||
	    bench_check_output("--svg", o->svg_path) < 0)
		return -1;
	if (geteuid() != 0) {
		log_error("bench: needs root: it creates network and mount namespaces");
		return -1;
	}
	if (!kmod_in_path(BENCH_IPERF3)) {
		log_error("bench: iperf3 is not installed: apt-get install iperf3 (or run "
			  "scripts/install-deps.sh)");
		return -1;
	}
	/* the reference lab is built with these, as an operator would */
	for (size_t i = 0; o->reference && i < sizeof(ref_tools) / sizeof(ref_tools[0]); i++) {
		if (!kmod_in_path(ref_tools[i].name)) {
			log_error("bench: --reference builds its lab with %s, which is not "
				  "installed: apt-get install %s (or run scripts/install-deps.sh)",
				  ref_tools[i].name, ref_tools[i].package);
			return -1;
		}
	}
	kmod_probe(&caps);
	if (kmod_missing_reason(&caps)) {
		log_error("bench: %s", kmod_missing_reason(&caps));
		return -1;
	}
	if (kmod_choose_backend(o->wg_backend, &caps, backend, err, sizeof(err)) < 0) {
		log_error("bench: %s", err);
		return -1;
	}
	return 0;
}

/* r's matrix for o; 0 or -1 (logged). */
static int results_init(const struct bench_opts *o, struct bench_results *r)
{
	r->repeat = o->repeat;
	memcpy(r->streams, o->streams, sizeof(r->streams));
	r->n_streams = o->n_streams;
	if (bench_results_init(r) < 0) {
		log_error("bench: out of memory");
		return -1;
	}
	return 0;
}

/* The lab is up: its header fields, and its wireguard-go processes (whose CPU is measured). */
static void side_ready(struct bench_side *x, struct bench_lab *lab)
{
	x->lab = lab;
	x->r->fabric_mtu = lab->fabric_mtu;
	x->r->zone_mtu = lab->zone_mtu;
	implementation(lab, x->r->implementation, sizeof(x->r->implementation));
	if (lab->backend != WG_BACKEND_USERSPACE)
		return;
	x->n_wg = lab_find(lab, "wireguard-go", x->wg, LAB_MAX_PROCS);
	if (x->n_wg != LAB_NODES)
		log_warn("bench: found %zu wireguard-go processes in the lab %s, not %d: their "
			 "CPU time may be incomplete",
			 x->n_wg, lab->id, LAB_NODES);
}

/* --reference: the same lab by hand, at the MTUs fabricd's apply gave; 0 or -1. */
static int reference_up(const struct bench_opts *o, const struct bench_lab *lab,
			struct bench_lab *ref, struct bench_side *x)
{
	struct bench_results *r = x->r;

	x->r = calloc(1, sizeof(*x->r));
	if (!x->r || results_init(o, x->r) < 0) {
		if (x->r)
			bench_results_free(x->r);
		free(x->r);
		x->r = r;
		return -1;
	}
	r->reference = x->r;
	fill_header(x->r, o, ref);
	ref->fabric_mtu = lab->fabric_mtu;
	ref->zone_mtu = lab->zone_mtu;
	fprintf(stderr,
		"fabricd bench --reference: the same lab by hand (ip, bridge, wg) in namespaces "
		"%s-*\n",
		ref->id);
	if (lab_up(ref) < 0)
		return -1;
	side_ready(x, ref);
	return 0;
}

static void remove_lab(struct bench_lab *lab, bool say)
{
	bool built = lab->dir_made;

	if (lab_down(lab) < 0)
		log_error("bench: the lab %s was not removed completely: see above", lab->id);
	else if (built && say)
		fprintf(stderr, "bench: removed the lab %s\n", lab->id);
}

static void announce(const struct bench_opts *o, const struct bench_lab *lab,
		     struct bench_results *r)
{
	double estimate = (double)(o->repeat * o->n_streams * BENCH_N_PATHS) * (o->duration + 0.4) *
			      (o->reference ? 2 : 1) +
			  10;

	fprintf(stderr,
		"fabricd bench: building a 2-node lab in namespaces %s-* (WireGuard: %s); "
		"measuring takes about %.0f s\n",
		lab->id, wg_backend_name(lab->backend), estimate);
	r->busy_before = busy_before();
	if (r->busy_before > BENCH_BUSY_WARN)
		log_warn("bench: this host is %.0f%% busy before the bench starts: other work "
			 "skews every figure; run the bench on an idle host",
			 r->busy_before);
}

int bench_main(const struct bench_opts *o)
{
	struct bench_results r = {0};
	struct sigaction old[3];
	struct bench_lab lab, ref;
	struct bench_side sides[2] = {{.r = &r}, {.r = &r}};
	enum wg_backend backend;
	double t0 = now_s();
	int ret = 1, m = -1;

	/* until the first namespace exists, a signal may simply end the process */
	if (preflight(o, &backend) < 0)
		return 1;
	if (results_init(o, &r) < 0) {
		bench_results_free(&r);
		return 1;
	}
	bench_stop = 0;
	install_handlers(old);
	lab_init(&lab, backend, o->wg_backend, o->verbose, false);
	lab_init(&ref, backend, o->wg_backend, o->verbose, true);
	fill_header(&r, o, &lab);
	announce(o, &lab, &r);
	if (bench_stop || lab_up(&lab) < 0)
		goto down;
	side_ready(&sides[0], &lab);
	if (o->reference && (bench_stop || reference_up(o, &lab, &ref, &sides[1]) < 0))
		goto down;
	fprintf(stderr, "lab %s up (apply took %.1f s on both nodes); measuring\n", lab.id,
		lab.apply_seconds);
	m = measure(o, sides, o->reference ? 2 : 1);
	if (m == 0 && o->reference && !bench_stop)
		m = profile(o, sides, &r.profile);
	if (m == 0 && !bench_stop && bench_trace_possible(backend, &r.hist))
		histogram(o, &lab, &r);
down:
	remove_lab(&ref, bench_stop || m < 0);
	remove_lab(&lab, bench_stop || m < 0);
	restore_handlers(old);
	if (bench_stop) {
		log_error("bench: interrupted (signal %d): nothing was reported", (int)bench_stop);
		goto out;
	}
	if (m < 0)
		goto out;
	r.wall_seconds = now_s() - t0;
	ret = report(o, &r);
out:
	bench_results_free(&r);
	return ret;
}
