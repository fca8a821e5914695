// SPDX-License-Identifier: GPL-2.0-or-later
/* profile.c - perf's samples of every CPU, counted for netfilter's functions. */
#include <ctype.h>
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
#include "bench/profile.h"
#include "bench/sample.h"
#include "kmod/probe.h"

#define STR2(x) #x
#define STR(x)	STR2(x)

double bench_profile_share(const struct bench_profile_run *run)
{
	if (run->cpu_seconds <= 0)
		return -1;
	return 100.0 * (double)run->netfilter_samples * BENCH_PROFILE_PERIOD_NS / 1e9 /
	       run->cpu_seconds;
}

/*
 * The hook traversal (nf_hook_slow, which bridge netfilter also calls in
 * both labs) and everything of nf_tables' (nft_do_chain, its expressions and
 * set backends). Bridge netfilter's own functions (br_nf_*) are not
 * counted: the kernel runs them for bridged frames in both labs alike.
 */
bool bench_profile_netfilter_symbol(const char *sym)
{
	return strcmp(sym, "nf_hook_slow") == 0 || strncmp(sym, "nft_", 4) == 0 ||
	       strncmp(sym, "__nft_", 6) == 0 || strncmp(sym, "nf_tables_", 10) == 0;
}

/* One "  123  [k] symbol" line into its count and symbol; false for anything else. */
static bool sample_line(char *line, unsigned long long *count, const char **sym)
{
	char *p = line, *end;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	*count = strtoull(p, &end, 10);
	if (errno || end == p || !isspace((unsigned char)*end))
		return false;
	p = end;
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '[' || !(p = strchr(p, ']')))
		return false;
	p++;
	while (isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		*--end = '\0';
	*sym = p;
	return *p != '\0';
}

int bench_profile_parse(const char *text, struct bench_profile_run *run)
{
	char *copy = strdup(text ? text : ""), *line, *save = NULL;
	uint64_t samples = 0, netfilter = 0;
	bool any = false;

	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long count;
		const char *sym;

		if (line[0] == '#' || !sample_line(line, &count, &sym))
			continue;
		any = true;
		samples += count;
		if (bench_profile_netfilter_symbol(sym))
			netfilter += count;
	}
	free(copy);
	if (!any)
		return -EINVAL;
	run->samples += samples;
	run->netfilter_samples += netfilter;
	return 0;
}

bool bench_profile_possible(char *why, size_t len)
{
	if (!kmod_in_path(BENCH_PROFILE_PERF)) {
		snprintf(why, len, "perf is not installed (Debian package linux-perf)");
		return false;
	}
	why[0] = '\0';
	return true;
}

/* how often bench_profile_start looks whether perf has started recording */
#define START_POLL_MS 50

/* perf has written its header once the file has a size; it records from then on. */
static bool recording(const char *data_path)
{
	struct stat st;

	return stat(data_path, &st) == 0 && st.st_size > 0;
}

pid_t bench_profile_start(const char *data_path, const char *log_path, char *why, size_t len)
{
	char *argv[] = {BENCH_PROFILE_PERF,
			"record",
			"-a",
			"-e",
			"cpu-clock",
			"-c",
			STR(BENCH_PROFILE_PERIOD_NS),
			"-o",
			(char *)data_path,
			NULL};
	int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), idle_polls = 0;
	long long ticks = 0;
	bool stuck = false;
	pid_t pid;

	if (fd < 0) {
		snprintf(why, len, "cannot create %s: %s", log_path, strerror(errno));
		return -errno;
	}
	unlink(data_path);
	pid = lab_spawn(NULL, LAB_HOST, argv, fd, fd);
	close(fd);
	if (pid < 0) {
		snprintf(why, len, "perf did not start: %s", strerror((int)-pid));
		return pid;
	}
	for (int t = 0; t < BENCH_PROFILE_START_S * 1000 / START_POLL_MS && !bench_stop; t++) {
		long long now = bench_pid_cpu_ticks(pid); /* -1 once gone: waitpid says so */

		idle_polls = now > ticks ? 0 : idle_polls + 1;
		ticks = now;
		stuck = idle_polls * START_POLL_MS >= BENCH_PROFILE_IDLE_S * 1000;
		if (stuck)
			break;
		if (recording(data_path)) {
			lab_sleep_ms(100);
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			char said[160];

			bench_first_line(log_path, said, sizeof(said));
			snprintf(why, len, "perf record exited at once: %s", said);
			return -ECHILD;
		}
		lab_sleep_ms(START_POLL_MS);
	}
	kill(pid, SIGKILL);
	lab_wait(pid, 1000);
	if (stuck)
		snprintf(why, len,
			 "perf record did not start recording: it used no CPU for %d s (stuck)",
			 BENCH_PROFILE_IDLE_S);
	else
		snprintf(why, len, "perf record did not start recording within %d s",
			 BENCH_PROFILE_START_S);
	return -ETIMEDOUT;
}

/* `perf report` of data_path's samples per symbol, into report_path; 0 or -errno. */
static int report(const char *data_path, const char *report_path, char *why, size_t len)
{
	char *argv[] = {
	    BENCH_PROFILE_PERF, "report", "-i", (char *)data_path, "--stdio", "--no-children",
	    "--sort",		"sym",	  "-F", "sample,sym",	   NULL};
	char err_path[160], said[160];
	int fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err_fd;
	int status;
	pid_t pid;

	snprintf(err_path, sizeof(err_path), "%s.err", report_path);
	err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || err_fd < 0) {
		snprintf(why, len, "cannot create %s: %s", fd < 0 ? report_path : err_path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	pid = lab_spawn(NULL, LAB_HOST, argv, fd, err_fd);
	close(fd);
	close(err_fd);
	status = pid < 0 ? (int)pid : lab_wait(pid, 120000);
	if (status != 0) {
		bench_first_line(err_path, said, sizeof(said));
		snprintf(why, len, "perf report failed: %s", status < 0 ? strerror(-status) : said);
		return status < 0 ? status : -EIO;
	}
	return 0;
}

int bench_profile_stop(pid_t pid, const char *data_path, const char *report_path,
		       struct bench_profile_run *run, char *why, size_t len)
{
	char *text;
	int status, ret;

	kill(pid, SIGINT);
	status = lab_wait(pid, 30000);
	/* perf record ends on SIGINT with status 0, or as killed by it */
	if (status < 0 || !(WIFEXITED(status) || WIFSIGNALED(status))) {
		snprintf(why, len, "perf record did not finish writing %s", data_path);
		return status < 0 ? status : -EIO;
	}
	ret = report(data_path, report_path, why, len);
	if (ret < 0)
		return ret;
	text = bench_read_text(report_path);
	ret = bench_profile_parse(text, run);
	free(text);
	if (ret < 0)
		snprintf(why, len, "perf report printed no samples");
	return ret;
}
