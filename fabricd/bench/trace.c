// SPDX-License-Identifier: GPL-2.0-or-later
/* trace.c - bpftrace histogram of WireGuard's encryption, where the host allows it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/lab.h"
#include "bench/sample.h"
#include "bench/trace.h"

#define BPFTRACE "bpftrace"

static const char *const program = "kprobe:" BENCH_TRACE_FUNCTION " { @start[tid] = nsecs; }\n"
				   "kretprobe:" BENCH_TRACE_FUNCTION " /@start[tid]/ {\n"
				   "  @ns = hist(nsecs - @start[tid]); delete(@start[tid]);\n"
				   "}\n"
				   "END { clear(@start); }\n";

static bool in_path(const char *prog)
{
	static const char *const dirs[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
					   "/usr/bin",	      "/sbin",		"/bin"};
	char path[128];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], prog);
		if (access(path, X_OK) == 0)
			return true;
	}
	return false;
}

/* kprobes as bpftrace uses them: the perf "kprobe" event source, or tracefs kprobe_events. */
static bool have_kprobes(void)
{
	struct stat st;

	return stat("/sys/bus/event_source/devices/kprobe", &st) == 0 ||
	       stat("/sys/kernel/tracing/kprobe_events", &st) == 0 ||
	       stat("/sys/kernel/debug/tracing/kprobe_events", &st) == 0;
}

static bool have_symbol(const char *name)
{
	char *text = bench_read_text("/proc/kallsyms"), *p;
	size_t len = strlen(name);
	bool found = false;

	for (p = text; p && (p = strstr(p, name)); p += len) {
		/* " T name\n" or " t name\t[module]" */
		if (p > text && p[-1] == ' ' && (p[len] == '\n' || p[len] == '\t' || !p[len])) {
			found = true;
			break;
		}
	}
	free(text);
	return found;
}

static void add_reason(struct bench_hist *h, const char *why)
{
	size_t n = strlen(h->reason);

	snprintf(h->reason + n, sizeof(h->reason) - n, "%s%s", n ? "; " : "", why);
}

bool bench_trace_possible(enum wg_backend backend, struct bench_hist *h)
{
	h->reason[0] = '\0';
	h->available = false;
	if (backend == WG_BACKEND_USERSPACE)
		add_reason(h,
			   "the WireGuard measured is wireguard-go, whose encryption runs in user "
			   "space where kernel probes do not reach");
	if (!in_path(BPFTRACE))
		add_reason(h, "bpftrace is not installed (Debian package bpftrace)");
	if (!have_kprobes())
		add_reason(h, "this kernel has no kprobes (CONFIG_KPROBES / CONFIG_KPROBE_EVENTS "
			      "off: tracepoints only)");
	else if (backend == WG_BACKEND_KERNEL && !have_symbol(BENCH_TRACE_FUNCTION))
		add_reason(h, "the kernel has no " BENCH_TRACE_FUNCTION " to probe");
	snprintf(h->function, sizeof(h->function), "%s", BENCH_TRACE_FUNCTION);
	return !h->reason[0];
}

pid_t bench_trace_start(const char *out_path, struct bench_hist *h)
{
	char *argv[] = {BPFTRACE, "-e", (char *)program, NULL};
	int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid_t pid;

	if (fd < 0) {
		snprintf(h->reason, sizeof(h->reason), "cannot create %s: %s", out_path,
			 strerror(errno));
		return -errno;
	}
	pid = lab_spawn(NULL, LAB_HOST, argv, fd, fd);
	close(fd);
	if (pid < 0) {
		snprintf(h->reason, sizeof(h->reason), "bpftrace did not start: %s",
			 strerror((int)-pid));
		return pid;
	}
	/* "Attaching 3 probes..." once the probes are in; compiling takes a few seconds */
	for (int t = 0; t < 300 && !bench_stop; t++) {
		char *text = bench_read_text(out_path);
		bool ready = text && strstr(text, "Attaching");

		free(text);
		if (ready) {
			lab_sleep_ms(200);
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			snprintf(h->reason, sizeof(h->reason),
				 "bpftrace exited before attaching its probes (see `bpftrace -e` "
				 "on " BENCH_TRACE_FUNCTION ")");
			return -ECHILD;
		}
		lab_sleep_ms(50);
	}
	kill(pid, SIGKILL);
	lab_wait(pid, 1000);
	snprintf(h->reason, sizeof(h->reason), "bpftrace did not attach its probes within 15 s");
	return -ETIMEDOUT;
}

/* "512", "1K", "4M", "2G" as bpftrace prints bucket bounds (powers of 1024). */
static const char *parse_bound(const char *s, double *v)
{
	char *end;
	double x = strtod(s, &end);

	if (end == s)
		return NULL;
	switch (*end) {
	case 'K':
		x *= 1024.0, end++;
		break;
	case 'M':
		x *= 1024.0 * 1024, end++;
		break;
	case 'G':
		x *= 1024.0 * 1024 * 1024, end++;
		break;
	}
	*v = x;
	return end;
}

int bench_trace_parse(const char *text, struct bench_hist *h)
{
	const char *line = text;

	free(h->buckets);
	h->buckets = NULL;
	h->n_buckets = 0;
	while (line && *line) {
		const char *next = strchr(line, '\n'), *p = line;
		struct bench_hist_bucket b = {0};
		unsigned long long count;

		if (*p == '[' && (p = parse_bound(p + 1, &b.low))) {
			if (*p == ']') {
				b.high = b.low + 1; /* "[0]", "[1]": one value */
				p++;
			} else if (p[0] == ',' && p[1] == ' ') {
				const char *q = p + 2;

				if (*q == '.') {
					b.high = -1; /* "[8M, ...)": open-ended */
					q = strchr(q, ')');
				} else if ((q = parse_bound(q, &b.high)) && *q != ')') {
					q = NULL;
				}
				p = q ? q + 1 : NULL;
			} else {
				p = NULL;
			}
			if (p && sscanf(p, "%llu", &count) == 1) {
				struct bench_hist_bucket *grown =
				    realloc(h->buckets, (h->n_buckets + 1) * sizeof(*grown));

				if (!grown)
					return -ENOMEM;
				b.count = count;
				h->buckets = grown;
				h->buckets[h->n_buckets++] = b;
			}
		}
		line = next ? next + 1 : NULL;
	}
	return h->n_buckets ? 0 : -EINVAL;
}

void bench_trace_stop(pid_t pid, const char *out_path, struct bench_hist *h)
{
	char *text;
	int status;

	kill(pid, SIGINT);
	status = lab_wait(pid, 15000);
	text = bench_read_text(out_path);
	if (status < 0 || !text || bench_trace_parse(text, h) < 0) {
		h->available = false;
		snprintf(h->reason, sizeof(h->reason),
			 "bpftrace ran but printed no histogram of " BENCH_TRACE_FUNCTION
			 " (did the secure run encrypt in the kernel?)");
	} else {
		h->available = true;
	}
	free(text);
}
