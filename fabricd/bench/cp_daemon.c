// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/cp_daemon.c - the control-plane bench's daemon steps, on the node the
 * one-shot steps built: `fabricd run` started in the namespace; once it has
 * adopted the fabric, its RSS, and its CPU at rest; one more vnet written into the definition and
 * the time until that vnet's bridge and flood entries are in the kernel (the
 * daemon's one-vnet pass, compared with a full build; control_plane.c does
 * that three times and takes the median); then SIGHUP reloads,
 * one after the other, and the RSS after them; then SIGTERM (the fabric stays
 * for `down`).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/control_plane.h"
#include "bench/cp_watch.h"
#include "bench/labnet.h"
#include "bench/sample.h"
#include "base/log.h"
#include "kinds/fdb.h"
#include "netlink/nl.h"

/* what the daemon logs when it has adopted the fabric, and after each SIGHUP */
#define LINE_ADOPTED  "up to date, nothing to change"
#define LINE_RELOADED "reloaded, no change"
#define WAIT_S	      120

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* How often line occurs in the log after offset from. */
static int count_lines(const char *log, long from, const char *line)
{
	FILE *f = fopen(log, "re");
	char buf[1024];
	int n = 0;

	if (!f)
		return 0;
	if (fseek(f, from, SEEK_SET) == 0) {
		while (fgets(buf, sizeof(buf), f))
			n += strstr(buf, line) != NULL;
	}
	fclose(f);
	return n;
}

static long log_size(const char *log)
{
	FILE *f = fopen(log, "re");
	long n = 0;

	if (f && fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (f)
		fclose(f);
	return n;
}

/* Waits until line occurs n times after from, or the daemon exited. 0 or -1. */
static int wait_line(const struct cp_daemon *d, const char *log, long from, const char *line, int n)
{
	double t0 = now_s();

	while (!bench_stop && now_s() - t0 < WAIT_S) {
		if (count_lines(log, from, line) >= n)
			return 0;
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			log_error("bench: fabricd run exited; its output is in %s", log);
			return -1;
		}
		pause_ms(5);
	}
	log_error("bench: fabricd run did not log \"%s\" within %d s; its output is in %s", line,
		  WAIT_S, log);
	return -1;
}

/* A line "NAME: N kB" of the daemon's /proc status (VmRSS, VmHWM), KiB; 0 when unreadable. */
static long status_kib(pid_t pid, const char *name)
{
	char path[64], line[128], fmt[32];
	long kib = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	snprintf(fmt, sizeof(fmt), "%s: %%ld kB", name);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, fmt, &kib) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kib;
}

static long rss_kib(pid_t pid)
{
	return status_kib(pid, "VmRSS");
}

/* Waits until the daemon's pass is over: no CPU used for 300 ms (at most 10 s). */
static void wait_idle(pid_t pid)
{
	long long last = bench_pid_cpu_ticks(pid);
	int quiet = 0;

	for (int i = 0; i < 100 && quiet < 3 && !bench_stop; i++) {
		long long now;

		pause_ms(100);
		now = bench_pid_cpu_ticks(pid);
		quiet = now == last ? quiet + 1 : 0;
		last = now;
	}
}

static int count_fdb_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fdb_entry e;

	if (fdb_parse(nlh, &e) > 0)
		(*(unsigned int *)data)++;
	return MNL_CB_OK;
}

static int ifindex_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type == RTM_NEWLINK && nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*ifi)))
		*(int *)data = ifi->ifi_index;
	return MNL_CB_OK;
}

/* The flood entries of the ports of bridge name; -1 while there is no such bridge. */
static int vnet_flood(struct nl_sock *s, const char *name)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct ndmsg *ndm;
	unsigned int n = 0;
	int ifindex = 0;

	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (nl_request(s, nlh, ifindex_cb, &ifindex) < 0 || ifindex <= 0)
		return -1;
	nlh = nl_msg_start(s, buf, RTM_GETNEIGH, 0);
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	mnl_attr_put_u32(nlh, NDA_MASTER, (uint32_t)ifindex);
	if (nl_dump(s, nlh, count_fdb_cb, NULL, &n) < 0)
		return -1;
	return (int)n;
}

int cp_daemon_start(const struct cp_ns *ns, char *const argv[], const char *log,
		    struct cp_daemon *d)
{
	d->log_from = log_size(log);
	d->t0 = now_s();
	d->pid = cp_spawn(ns, argv, log);
	if (d->pid < 0)
		return -1;
	if (wait_line(d, log, d->log_from, LINE_ADOPTED, 1) < 0)
		return -1;
	d->startup_seconds = now_s() - d->t0;
	wait_idle(d->pid); /* the settling pass */
	d->steady_rss_kib = rss_kib(d->pid);
	return 0;
}

int cp_daemon_add_vnet(const struct cp_ns *ns, const char *bridge, unsigned int want_flood,
		       int (*write_def)(void *arg, double *renamed_at), void *arg,
		       struct cp_daemon *d)
{
	struct cp_flood_watch *w = calloc(1, sizeof(*w));
	struct nl_sock s = {0};
	double t0, heard = 0;
	int ret = labnet_nl_open_in(ns->net_fd, &s), n = -1, seen;

	if (ret == 0 && w)
		ret = cp_flood_watch_open(ns->net_fd, bridge, w);
	if (ret < 0 || !w) {
		log_error("bench: cannot open netlink in the namespace: %s",
			  strerror(w ? -ret : ENOMEM));
		nl_close(&s);
		free(w);
		return -1;
	}
	/* from the rename that puts it in place: making the JSON is the bench's work */
	if (write_def(arg, &t0) < 0) {
		cp_flood_watch_close(w);
		free(w);
		nl_close(&s);
		return -1;
	}
	seen = cp_flood_watch_wait(w, want_flood, WAIT_S, &bench_stop);
	if (seen > 0)
		heard = now_s();
	else if (seen < 0)
		log_warn("bench: the kernel's announcements were lost (%s); counting the flood "
			 "entries by asking instead",
			 strerror(-seen));
	cp_flood_watch_close(w);
	free(w);
	/* confirmed by asking once; asked every millisecond only when listening failed */
	while (!bench_stop && now_s() - t0 < WAIT_S) {
		n = vnet_flood(&s, bridge);
		if (n >= 0 && (unsigned int)n >= want_flood)
			break;
		heard = 0;
		pause_ms(1);
	}
	d->add_vnet_seconds = (heard ? heard : now_s()) - t0;
	d->add_vnet_heard = heard > 0;
	nl_close(&s);
	if (n < 0 || (unsigned int)n < want_flood) {
		log_error("bench: fabricd run did not build vnet %s within %d s (%d of %u flood "
			  "entries)",
			  bridge, WAIT_S, n, want_flood);
		return -1;
	}
	d->add_vnet_done = true;
	return 0;
}

void cp_daemon_idle(unsigned int seconds, struct cp_daemon *d)
{
	double t0 = now_s(), elapsed;
	long long c0 = bench_pid_cpu_ticks(d->pid), c1;

	while (!bench_stop && now_s() - t0 < seconds)
		pause_ms(100);
	c1 = bench_pid_cpu_ticks(d->pid);
	elapsed = now_s() - t0;
	if (c0 < 0 || c1 < 0 || bench_stop)
		return;
	d->idle_seconds = elapsed;
	d->idle_cpu_percent = 100.0 * (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK) / elapsed;
}

int cp_daemon_reloads(const char *log, unsigned int n, struct cp_daemon *d)
{
	long from = log_size(log);

	wait_idle(d->pid); /* the pass after the vnet, and the one that reads it back */
	d->rss_before_reloads_kib = rss_kib(d->pid);
	for (unsigned int i = 0; i < n; i++) {
		if (kill(d->pid, SIGHUP) < 0 ||
		    wait_line(d, log, from, LINE_RELOADED, (int)i + 1) < 0)
			return -1;
		d->reloads = i + 1;
		if (d->reloads == n / 2) {
			wait_idle(d->pid);
			d->rss_half_reloads_kib = rss_kib(d->pid);
		}
	}
	wait_idle(d->pid); /* the last reload's pass */
	d->rss_after_reloads_kib = rss_kib(d->pid);
	d->peak_rss_kib = status_kib(d->pid, "VmHWM");
	return 0;
}

void cp_daemon_stop(struct cp_daemon *d)
{
	double t0 = now_s();
	int status;

	if (d->pid <= 0)
		return;
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &status, WNOHANG) == 0) {
		if (now_s() - t0 > 30) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
			break;
		}
		pause_ms(5);
	}
	d->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	d->pid = 0;
}
