// SPDX-License-Identifier: GPL-2.0-or-later
/* iperf.c - iperf3 server and client inside the lab, and the run's samples. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/iperf.h"
#include "bench/sample.h"
#include "base/log.h"

int bench_iperf_parse(const char *json_text, struct bench_run *run, char *err, size_t errlen)
{
	json_t *root, *end, *recv, *sent, *v;
	json_error_t jerr;
	int ret = -EINVAL;

	root = json_loads(json_text, 0, &jerr);
	if (!root) {
		snprintf(err, errlen, "iperf3 gave no JSON result (%s at line %d)", jerr.text,
			 jerr.line);
		return -EINVAL;
	}
	v = json_object_get(root, "error");
	if (json_is_string(v)) {
		snprintf(err, errlen, "iperf3: %s", json_string_value(v));
		goto out;
	}
	end = json_object_get(root, "end");
	recv = json_object_get(end, "sum_received");
	sent = json_object_get(end, "sum_sent");
	if (!json_is_number(json_object_get(recv, "bytes")) ||
	    !json_is_number(json_object_get(recv, "bits_per_second"))) {
		snprintf(err, errlen, "iperf3's result has no end.sum_received (not a TCP test?)");
		goto out;
	}
	run->bytes = json_number_value(json_object_get(recv, "bytes"));
	run->gbps = json_number_value(json_object_get(recv, "bits_per_second")) / 1e9;
	v = json_object_get(sent, "retransmits");
	run->retransmits = json_is_number(v) ? json_number_value(v) : -1;
	if (run->bytes <= 0 || run->gbps <= 0) {
		snprintf(err, errlen, "iperf3 moved no data");
		goto out;
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

/* Whether pid's network namespace has a TCP socket listening on port (/proc/PID/net/tcp*). */
static bool listening(pid_t pid, unsigned int port)
{
	static const char *const files[] = {"tcp", "tcp6"};
	char want[16];
	bool found = false;

	snprintf(want, sizeof(want), ":%04X", port);
	for (size_t i = 0; i < 2 && !found; i++) {
		char path[64], *text, *line, *save = NULL;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, files[i]);
		text = bench_read_text(path);
		for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			char local[64], remote[64], st[8];

			/* "  0: 0C0200C0:1451 00000000:0000 0A ..." */
			if (sscanf(line, "%*s %63s %63s %7s", local, remote, st) != 3)
				continue;
			found = !strcmp(st, "0A") && strstr(local, want) &&
				!strcmp(strstr(local, want), want);
		}
		free(text);
	}
	return found;
}

/* Opens path for a child's output (truncated), or -errno. */
static int open_out(const struct bench_lab *lab, const char *name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", lab->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

static pid_t start_server(const struct bench_lab *lab, const struct lab_path *lp, char *log_path,
			  size_t log_len)
{
	char port[8];
	char *argv[] = {BENCH_IPERF3, "-s", "-1", "-B", (char *)lp->server_addr, "-p", port, NULL};
	char why[256];
	pid_t pid;
	int fd;

	snprintf(port, sizeof(port), "%u", lp->port);
	fd = open_out(lab, "iperf3-server.log", log_path, log_len);
	if (fd < 0) {
		log_error("bench: cannot create %s: %s", log_path, strerror(-fd));
		return fd;
	}
	pid = lab_spawn(lab, lp->server, argv, fd, fd);
	close(fd);
	if (pid < 0) {
		log_error("bench: cannot start iperf3: %s", strerror((int)-pid));
		return pid;
	}
	for (int t = 0; t < 500 && !bench_stop; t++) {
		if (listening(pid, lp->port))
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			bench_first_line(log_path, why, sizeof(why));
			log_error("bench: the iperf3 server on %s:%u in %s exited at once: %s",
				  lp->server_addr, lp->port, lab->ns[lp->server], why);
			return -ECHILD;
		}
		lab_sleep_ms(10);
	}
	lab_wait(pid, 0);
	if (!bench_stop)
		log_error("bench: the iperf3 server on %s:%u in %s did not listen within 5 s",
			  lp->server_addr, lp->port, lab->ns[lp->server]);
	return bench_stop ? -EINTR : -ETIMEDOUT;
}

int bench_iperf_run(const struct bench_lab *lab, enum bench_path path, unsigned int streams,
		    unsigned int seconds, const pid_t *watch, size_t n_watch, bool watching,
		    struct bench_run *run)
{
	char t[16], p[16], port[8], srv_log[128], cli_out[128], why[512];
	char *argv[] = {BENCH_IPERF3,	     "-c",   NULL, "-p", port, "-t", t, "-P", p, "-J",
			"--connect-timeout", "5000", NULL};
	struct bench_snap a = {0}, b = {0};
	struct lab_path lp;
	pid_t server, client = -1;
	unsigned int n_cpu = (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	char *text = NULL;
	int fd, status, ret = -1;

	lab_path_of(path, &lp);
	argv[2] = (char *)lp.server_addr;
	snprintf(t, sizeof(t), "%u", seconds);
	snprintf(p, sizeof(p), "%u", streams);
	snprintf(port, sizeof(port), "%u", lp.port);
	if (bench_snap_init(&a, n_cpu) < 0 || bench_snap_init(&b, n_cpu) < 0) {
		log_error("bench: out of memory");
		goto out;
	}
	server = start_server(lab, &lp, srv_log, sizeof(srv_log));
	if (server < 0) {
		ret = server == -EINTR ? -EINTR : -1;
		goto out;
	}
	fd = open_out(lab, "iperf3-client.json", cli_out, sizeof(cli_out));
	if (fd < 0 || bench_snap_take(&a, watch, n_watch) < 0) {
		log_error("bench: cannot prepare the run (%s or /proc): %s", cli_out,
			  strerror(fd < 0 ? -fd : errno));
		if (fd >= 0)
			close(fd);
		lab_wait(server, 0);
		goto out;
	}
	client = lab_spawn(lab, lp.client, argv, fd, -1);
	close(fd);
	/* generous: connecting, the test, and the results exchange */
	status = client < 0 ? (int)client : lab_wait(client, (int)(seconds * 1000 + 20000));
	if (bench_snap_take(&b, watch, n_watch) < 0) {
		log_error("bench: cannot read /proc: %s", strerror(errno));
		lab_wait(server, 0);
		goto out;
	}
	/* the one-off server leaves after its test; a client that failed may leave it waiting */
	if (lab_wait(server, status == 0 ? 3000 : 0) == -ETIMEDOUT)
		log_warn("bench: the iperf3 server of path %s did not exit; it was killed",
			 bench_path_name(path));
	if (status == -EINTR || bench_stop) {
		ret = -EINTR;
		goto out;
	}
	text = bench_read_text(cli_out);
	if (status < 0 || !text || bench_iperf_parse(text, run, why, sizeof(why)) < 0) {
		if (status == -ETIMEDOUT)
			snprintf(why, sizeof(why), "iperf3 did not finish within %u s",
				 seconds + 20);
		else if (status < 0 || !text)
			snprintf(why, sizeof(why), "%s", strerror(status < 0 ? -status : errno));
		log_error("bench: path %s, %u stream%s (%s in %s to %s:%u in %s): %s",
			  bench_path_name(path), streams, streams == 1 ? "" : "s", BENCH_IPERF3,
			  lab->ns[lp.client], lp.server_addr, lp.port, lab->ns[lp.server], why);
		goto out;
	}
	if (bench_snap_delta(&a, &b, watching, run) < 0) {
		log_error("bench: the /proc counters of path %s make no sense",
			  bench_path_name(path));
		goto out;
	}
	ret = 0;
out:
	free(text);
	bench_snap_free(&a);
	bench_snap_free(&b);
	return ret;
}
