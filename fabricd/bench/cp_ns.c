// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/cp_ns.c - the control-plane bench's namespaces: anonymous ones, made
 * by a short-lived child that unshares them and kept only by the bench's own
 * file descriptors (nothing in /run/netns, nothing to unmount: they vanish
 * with the last process inside and the last descriptor). The fabricd side
 * also gets a mount namespace with private tmpfs on /run/wireguard
 * (wireguard-go's control sockets) and /run/fabricd (the node lock), as
 * tests/integration/fabtest gives each node. Also: running a child inside,
 * timed, with wait4's peak RSS; counting what the kernel holds there.
 */
#define _GNU_SOURCE /* setns, unshare, close_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/control_plane.h"
#include "bench/labnet.h"
#include "base/log.h"
#include "definition/desired.h"
#include "engine/observe.h"
#include "kinds/link.h"
#include "netlink/nl.h"

static const char *const private_dirs[] = {"/run/wireguard", "/run/fabricd"};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the new namespaces: lo up, the private mounts. 0 or an errno. */
static int setup_inside(bool with_mnt, const char *tag)
{
	struct link_change c = {.mask = LINK_SET_UP};
	char buf[NL_MSG_BUF] = {0};
	struct nl_sock s = {0};
	struct nlmsghdr *nlh;
	int err;

	if (with_mnt) {
		if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			return errno;
		for (size_t i = 0; i < sizeof(private_dirs) / sizeof(private_dirs[0]); i++) {
			if (mount(tag, private_dirs[i], "tmpfs", MS_NOSUID | MS_NODEV,
				  "mode=0755") < 0)
				return errno;
		}
	}
	err = nl_open(&s, NETLINK_ROUTE);
	if (err < 0)
		return -err;
	nlh = nl_msg_start(&s, buf, RTM_NEWLINK, 0);
	link_put_change(nlh, 1, NULL, &c); /* lo is always 1 in a new namespace */
	err = nl_request(&s, nlh, NULL, NULL);
	nl_close(&s);
	return err < 0 ? -err : 0;
}

static int open_ns(pid_t pid, const char *what, int *fd, unsigned long long *ino, dev_t *dev)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, what);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &st) < 0)
		return -errno;
	*ino = (unsigned long long)st.st_ino;
	if (dev)
		*dev = st.st_dev;
	return 0;
}

int cp_ns_make(struct cp_ns *ns, bool with_mnt, const char *tag)
{
	int ready[2], err = 0, status;
	pid_t pid;

	ns->net_fd = ns->mnt_fd = -1;
	for (size_t i = 0; with_mnt && i < sizeof(private_dirs) / sizeof(private_dirs[0]); i++) {
		if (mkdir(private_dirs[i], 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(ready[0]);
		close(ready[1]);
		return -err;
	}
	if (pid == 0) {
		close(ready[0]);
		if (unshare(CLONE_NEWNET | (with_mnt ? CLONE_NEWNS : 0)) < 0)
			err = errno;
		else
			err = setup_inside(with_mnt, tag);
		if (write(ready[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		/* stays until the parent holds the namespaces and kills it */
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &err, sizeof(err)) != sizeof(err))
		err = ECHILD;
	if (!err)
		err = -open_ns(pid, "net", &ns->net_fd, &ns->net_ino, &ns->net_dev);
	if (!err && with_mnt)
		err = -open_ns(pid, "mnt", &ns->mnt_fd, &ns->mnt_ino, NULL);
	close(ready[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return -err;
}

/* PIDs of the processes in ns's network or mount namespace; how many (at most max kept). */
static size_t scan(const struct cp_ns *ns, pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d))) {
		static const char *const kinds[] = {"net", "mnt"};
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (*end || v <= 1 || v == getpid())
			continue;
		for (int k = 0; k < 2; k++) {
			unsigned long long want = k ? ns->mnt_ino : ns->net_ino;
			char path[64];
			struct stat st;

			snprintf(path, sizeof(path), "/proc/%ld/ns/%s", v, kinds[k]);
			if (want && stat(path, &st) == 0 && st.st_ino == want &&
			    st.st_dev == ns->net_dev) {
				if (n < max)
					pids[n] = (pid_t)v;
				n++;
				break;
			}
		}
	}
	if (d)
		closedir(d);
	return n;
}

void cp_ns_drop(struct cp_ns *ns)
{
	pid_t pids[256];
	size_t n;

	for (int round = 0; round < 100 && (n = scan(ns, pids, 256)) > 0; round++) {
		struct timespec ts = {0, 20 * 1000000L};

		for (size_t i = 0; i < n && i < 256; i++)
			kill(pids[i], round < 50 ? SIGTERM : SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		nanosleep(&ts, NULL);
	}
	if (ns->net_fd >= 0)
		close(ns->net_fd);
	if (ns->mnt_fd >= 0)
		close(ns->mnt_fd);
	ns->net_fd = ns->mnt_fd = -1;
}

static void child_run(const struct cp_ns *ns, char *const argv[], const char *log)
{
	int null = open("/dev/null", O_RDONLY),
	    out = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null < 0 || out < 0 || (ns->mnt_fd >= 0 && setns(ns->mnt_fd, CLONE_NEWNS) < 0) ||
	    setns(ns->net_fd, CLONE_NEWNET) < 0 || chdir("/") < 0)
		_exit(126);
	if (dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(126);
	close_range(3, ~0U, 0);
	execvp(argv[0], argv);
	_exit(127);
}

int cp_exec(const struct cp_ns *ns, char *const argv[], const char *log, int timeout_s,
	    struct cp_result *out)
{
	struct timespec tick = {0, 5 * 1000000L};
	struct rusage ru;
	double t0;
	int status;
	pid_t pid, r;
	bool killed = false;

	fflush(stdout);
	fflush(stderr);
	t0 = now_s();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_run(ns, argv, log);
	/* polled, not blocking: a hung step is killed instead of hanging the bench */
	while ((r = wait4(pid, &status, WNOHANG, &ru)) == 0 || (r < 0 && errno == EINTR)) {
		if (!killed && (bench_stop || now_s() - t0 > timeout_s)) {
			if (!bench_stop)
				log_error("bench: %s %s took over %d s: killed", argv[0], argv[1],
					  timeout_s);
			kill(pid, SIGKILL);
			killed = true;
		}
		nanosleep(&tick, NULL);
	}
	if (r < 0)
		return -errno;
	out->ran = true;
	out->seconds = now_s() - t0;
	out->maxrss_kib = ru.ru_maxrss;
	out->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

pid_t cp_spawn(const struct cp_ns *ns, char *const argv[], const char *log)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		log_error("bench: cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0)
		child_run(ns, argv, log);
	return pid;
}

int cp_count(const struct cp_ns *ns, struct cp_counts *c, char *backend, size_t backend_len)
{
	struct link_table lt = {0};
	struct fdb_table ft = {0};
	struct nl_sock s = {0};
	pid_t pids[1];
	int ret = labnet_nl_open_in(ns->net_fd, &s);

	memset(c, 0, sizeof(*c));
	if (ret == 0)
		ret = link_dump(&s, &lt);
	if (ret == 0)
		ret = fdb_dump(&s, &ft);
	for (size_t i = 0; ret == 0 && i < lt.n; i++) {
		const struct link_obs *l = &lt.links[i];

		if (!strcmp(l->kind, "bridge"))
			c->bridges++;
		else if (!strcmp(l->kind, "vxlan"))
			c->vxlans++;
		else if (!strcmp(l->name, FABRIC_IFNAME)) {
			c->wireguard++;
			if (backend)
				snprintf(backend, backend_len, "%s",
					 strcmp(l->kind, "wireguard") ? "userspace" : "kernel");
		} else if (strcmp(l->name, "lo"))
			c->other_links++;
	}
	c->fdb = (unsigned int)ft.n;
	c->processes = (unsigned int)scan(ns, pids, 1);
	link_table_free(&lt);
	fdb_table_free(&ft);
	nl_close(&s);
	return ret;
}
