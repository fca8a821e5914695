// SPDX-License-Identifier: GPL-2.0-or-later
/* sample.c - host counters from /proc, and what changed between two readings. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/sample.h"

int bench_snap_init(struct bench_snap *s, unsigned int n_cpu)
{
	memset(s, 0, sizeof(*s));
	s->n_cpu = n_cpu ? n_cpu : 1;
	s->cpu = calloc(s->n_cpu, sizeof(*s->cpu));
	s->net_rx = calloc(s->n_cpu, sizeof(*s->net_rx));
	s->net_tx = calloc(s->n_cpu, sizeof(*s->net_tx));
	s->irqs = calloc(s->n_cpu, sizeof(*s->irqs));
	if (!s->cpu || !s->net_rx || !s->net_tx || !s->irqs) {
		bench_snap_free(s);
		return -ENOMEM;
	}
	return 0;
}

void bench_snap_free(struct bench_snap *s)
{
	free(s->cpu);
	free(s->net_rx);
	free(s->net_tx);
	free(s->irqs);
	memset(s, 0, sizeof(*s));
}

char *bench_read_text(const char *path)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap), *grown;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int saved;

	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			grown = realloc(buf, cap * 2);
			if (!grown)
				goto fail;
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	saved = errno ? errno : ENOMEM;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = saved;
	return NULL;
}

void bench_first_line(const char *path, char *buf, size_t len)
{
	char *text = bench_read_text(path);

	snprintf(buf, len, "%s", text && *text ? text : "(no output)");
	buf[strcspn(buf, "\n")] = '\0';
	free(text);
}

/* The next line of *p (without its newline), or NULL at the end; *p moves past it. */
static char *next_line(char **p)
{
	char *line = *p, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = line + strlen(line);
	}
	return line;
}

/* Reads up to n unsigned numbers from s into v; returns how many were read. */
static size_t read_numbers(const char *s, uint64_t *v, size_t n)
{
	size_t i = 0;

	while (i < n) {
		char *end;
		unsigned long long x;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!isdigit((unsigned char)*s))
			break;
		x = strtoull(s, &end, 10);
		v[i++] = x;
		s = end;
	}
	return i;
}

int bench_parse_stat(const char *text, struct bench_snap *s)
{
	char *copy = strdup(text), *p = copy, *line;
	bool have_total = false;

	if (!copy)
		return -ENOMEM;
	while ((line = next_line(&p))) {
		uint64_t v[CPUF_N] = {0};

		if (!strncmp(line, "cpu ", 4)) {
			/* older kernels have fewer fields; the missing ones stay 0 */
			have_total = read_numbers(line + 4, v, CPUF_N) >= 4;
			memcpy(s->total, v, sizeof(v));
		} else if (!strncmp(line, "cpu", 3) && isdigit((unsigned char)line[3])) {
			char *end;
			unsigned long id = strtoul(line + 3, &end, 10);

			if (id < s->n_cpu && read_numbers(end, v, CPUF_N) >= 4)
				memcpy(s->cpu[id], v, sizeof(v));
		} else if (!strncmp(line, "ctxt ", 5)) {
			read_numbers(line + 5, &s->ctxt, 1);
		}
	}
	free(copy);
	return have_total ? 0 : -EINVAL;
}

/*
 * The CPU numbers of the columns of a /proc/softirqs or /proc/interrupts
 * header ("    CPU0   CPU1 ..."): only online CPUs have a column in
 * /proc/interrupts, so a column is not always its CPU number.
 */
static size_t header_cpus(const char *line, unsigned int *ids, size_t max)
{
	size_t n = 0;

	while (n < max && (line = strstr(line, "CPU"))) {
		char *end;
		unsigned long id = strtoul(line + 3, &end, 10);

		if (end == line + 3)
			break;
		ids[n++] = (unsigned int)id;
		line = end;
	}
	return n;
}

/* Adds the per-column numbers of s to acc (indexed by CPU number). */
static void add_columns(const char *s, const unsigned int *ids, size_t n_cols, uint64_t *acc,
			unsigned int n_cpu)
{
	for (size_t i = 0; i < n_cols; i++) {
		unsigned long long x;
		char *end;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!isdigit((unsigned char)*s))
			return;
		x = strtoull(s, &end, 10);
		if (ids[i] < n_cpu)
			acc[ids[i]] += x;
		s = end;
	}
}

int bench_parse_softirqs(const char *text, struct bench_snap *s)
{
	char *copy = strdup(text), *p = copy, *line;
	unsigned int *ids = NULL;
	size_t n_cols = 0;
	int ret = -EINVAL;

	if (!copy)
		return -ENOMEM;
	line = next_line(&p);
	/* "CPU" plus a digit and a space at least: no more columns than that */
	ids = line ? calloc(strlen(line) / 5 + 1, sizeof(*ids)) : NULL;
	if (!ids)
		goto out;
	n_cols = header_cpus(line, ids, strlen(line) / 5 + 1);
	if (!n_cols)
		goto out;
	while ((line = next_line(&p))) {
		char *colon = strchr(line, ':');
		const char *name = line;

		if (!colon)
			continue;
		*colon = '\0';
		while (*name == ' ')
			name++;
		if (!strcmp(name, "NET_RX")) {
			memset(s->net_rx, 0, s->n_cpu * sizeof(*s->net_rx));
			add_columns(colon + 1, ids, n_cols, s->net_rx, s->n_cpu);
			ret = 0;
		} else if (!strcmp(name, "NET_TX")) {
			memset(s->net_tx, 0, s->n_cpu * sizeof(*s->net_tx));
			add_columns(colon + 1, ids, n_cols, s->net_tx, s->n_cpu);
		}
	}
out:
	free(ids);
	free(copy);
	return ret;
}

int bench_parse_interrupts(const char *text, struct bench_snap *s)
{
	char *copy = strdup(text), *p = copy, *line;
	unsigned int *ids = NULL;
	size_t n_cols;
	int ret = -EINVAL;

	if (!copy)
		return -ENOMEM;
	line = next_line(&p);
	/* "CPU" plus a digit and a space at least: no more columns than that */
	ids = line ? calloc(strlen(line) / 5 + 1, sizeof(*ids)) : NULL;
	if (!ids)
		goto out;
	n_cols = header_cpus(line, ids, strlen(line) / 5 + 1);
	if (!n_cols)
		goto out;
	memset(s->irqs, 0, s->n_cpu * sizeof(*s->irqs));
	while ((line = next_line(&p))) {
		char *label = line, *colon;

		while (*label == ' ')
			label++;
		/* device interrupts only: "  24:" lines; LOC, RES, NMI ... are the CPU's own */
		if (!isdigit((unsigned char)*label))
			continue;
		colon = strchr(label, ':');
		if (colon)
			add_columns(colon + 1, ids, n_cols, s->irqs, s->n_cpu);
	}
	ret = 0;
out:
	free(ids);
	free(copy);
	return ret;
}

int bench_parse_pid_stat(const char *text, uint64_t *ticks)
{
	/* the command name may hold spaces and ')': fields resume after the last ')' */
	const char *p = strrchr(text, ')');
	unsigned long long utime, stime;

	if (!p)
		return -EINVAL;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		   &stime) != 2)
		return -EINVAL;
	*ticks = utime + stime;
	return 0;
}

long long bench_pid_cpu_ticks(pid_t pid)
{
	char path[64], *text;
	uint64_t ticks;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = bench_read_text(path);
	ret = text ? bench_parse_pid_stat(text, &ticks) : -1;
	free(text);
	return ret < 0 ? -1 : (long long)ticks;
}

static int parse_file(const char *path, int (*parse)(const char *, struct bench_snap *),
		      struct bench_snap *s)
{
	char *text = bench_read_text(path);
	int ret;

	if (!text)
		return -errno;
	ret = parse(text, s);
	free(text);
	return ret;
}

int bench_snap_take(struct bench_snap *s, const pid_t *pids, size_t n_pids)
{
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	ret = parse_file("/proc/stat", bench_parse_stat, s);
	if (ret == 0)
		ret = parse_file("/proc/softirqs", bench_parse_softirqs, s);
	if (ret == 0)
		ret = parse_file("/proc/interrupts", bench_parse_interrupts, s);
	if (ret < 0)
		return ret;
	s->proc_ticks = 0;
	s->proc_ok = true;
	for (size_t i = 0; i < n_pids; i++) {
		long long t = bench_pid_cpu_ticks(pids[i]);

		if (t < 0)
			s->proc_ok = false;
		else
			s->proc_ticks += (uint64_t)t;
	}
	return 0;
}

static uint64_t sub(uint64_t b, uint64_t a)
{
	return b >= a ? b - a : 0; /* a counter never goes back; a CPU gone offline may */
}

/* Shares of one CPU line's time; returns the busy ticks. */
static uint64_t shares(const uint64_t *a, const uint64_t *b, double *usr, double *sys,
		       double *softirq, double *irq, double *busy)
{
	uint64_t d[CPUF_N], tot = 0, busy_ticks;

	for (int f = 0; f < CPUF_N; f++) {
		d[f] = sub(b[f], a[f]);
		tot += d[f];
	}
	/* steal is time the hypervisor gave to someone else: neither busy nor ours */
	busy_ticks = d[CPUF_USER] + d[CPUF_NICE] + d[CPUF_SYSTEM] + d[CPUF_IRQ] + d[CPUF_SOFTIRQ];
	if (!tot) {
		*usr = *sys = *softirq = *irq = *busy = 0;
		return 0;
	}
	*usr = 100.0 * (double)(d[CPUF_USER] + d[CPUF_NICE]) / (double)tot;
	*sys = 100.0 * (double)d[CPUF_SYSTEM] / (double)tot;
	*softirq = 100.0 * (double)d[CPUF_SOFTIRQ] / (double)tot;
	*irq = 100.0 * (double)d[CPUF_IRQ] / (double)tot;
	*busy = 100.0 * (double)busy_ticks / (double)tot;
	return busy_ticks;
}

int bench_snap_delta(const struct bench_snap *a, const struct bench_snap *b, bool watch_procs,
		     struct bench_run *run)
{
	double secs = b->t - a->t, hz = (double)sysconf(_SC_CLK_TCK);
	uint64_t busy;

	if (a->n_cpu != b->n_cpu || secs <= 0)
		return -EINVAL;
	if (hz <= 0)
		hz = 100;
	run->cpu = calloc(b->n_cpu, sizeof(*run->cpu));
	if (!run->cpu)
		return -ENOMEM;
	run->n_cpu = b->n_cpu;
	run->seconds = secs;
	busy = shares(a->total, b->total, &run->usr_pct, &run->sys_pct, &run->softirq_pct,
		      &run->irq_pct, &run->host_cpu_pct);
	run->cpu_seconds = (double)busy / hz;
	run->ctxt_per_s = (double)sub(b->ctxt, a->ctxt) / secs;
	for (unsigned int i = 0; i < b->n_cpu; i++) {
		struct bench_cpu *c = &run->cpu[i];

		shares(a->cpu[i], b->cpu[i], &c->usr, &c->sys, &c->softirq, &c->irq, &c->busy);
		c->net_rx = (double)sub(b->net_rx[i], a->net_rx[i]) / secs;
		c->net_tx = (double)sub(b->net_tx[i], a->net_tx[i]) / secs;
		c->irqs = (double)sub(b->irqs[i], a->irqs[i]) / secs;
	}
	if (watch_procs && a->proc_ok && b->proc_ok)
		run->wg_cpu_pct = 100.0 * (double)sub(b->proc_ticks, a->proc_ticks) / hz / secs;
	else
		run->wg_cpu_pct = -1;
	return 0;
}
