// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uapi_proc.c - userspace WireGuard: the wireguard-go process. Started
 * detached (double fork), its PID recorded in WG_UAPI_RUN_DIR/<dev>.pid,
 * stopped through a pidfd, found by a /proc scan, and only ever signalled
 * after /proc confirms it is "wireguard-go <dev>" in our network namespace.
 */
#define _GNU_SOURCE /* pipe2, close_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kinds/link.h"
#include "netlink/nl.h"
#include "wireguard/uapi.h"
#include "wireguard/uapi_priv.h"

#define START_TIMEOUT_MS 3000
#define STOP_TIMEOUT_MS	 2000
#define STEP_MS		 20
#define WG_GO_NL_RCVBUF	 (8 << 20) /* as daemon/watch.c's */
/*
 * The UDP sockets' buffers: what wireguard-go 0.0.20230223 and later set
 * themselves (SO_RCVBUFFORCE/SO_SNDBUFFORCE, 7 MiB); Debian 12's 0.0.20220316
 * keeps the defaults (208 KiB) and drops what arrives while it is busy.
 */
#define WG_GO_UDP_BUF (7 << 20)

/* ---- the wireguard-go process ---- */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* What the intermediate child reports, one write each (atomic on a pipe). */
enum { MSG_PID = 1, MSG_EXEC_FAILED, MSG_EXITED };

struct start_msg {
	int32_t kind;
	int32_t value; /* PID, errno of exec, or wait status */
};

static void send_msg(int fd, int32_t kind, int32_t value)
{
	struct start_msg m = {.kind = kind, .value = value};

	while (write(fd, &m, sizeof(m)) < 0 && errno == EINTR)
		;
}

/*
 * wireguard-go's environment, made before fork(): the daemon has threads
 * (the probe, the metrics server), and a child of a threaded process may
 * only make async-signal-safe calls until it execs (setenv() allocates).
 * fabricd's own, without the variables that would make wireguard-go adopt
 * descriptors it does not have or dump its memory (GOTRACEBACK=crash aborts
 * into a core file, which a piped core_pattern takes whatever the core size
 * limit says: the private key with it), and with its two settings. NULL:
 * ENOMEM.
 */
static char **wireguard_go_env(void)
{
	static const char *const dropped[] = {"WG_TUN_FD=",
					      "WG_UAPI_FD=",
					      "WG_TUN_NAME_FILE=",
					      "WG_PROCESS_FOREGROUND=",
					      "LOG_LEVEL=",
					      "GOTRACEBACK=",
					      NULL};
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	for (size_t i = 0; env && i < n; i++) {
		size_t d = 0;

		while (dropped[d] && strncmp(environ[i], dropped[d], strlen(dropped[d])))
			d++;
		if (!dropped[d])
			env[k++] = environ[i];
	}
	if (env) {
		env[k++] = (char *)"WG_PROCESS_FOREGROUND=1";
		env[k++] = (char *)"LOG_LEVEL=error";
	}
	return env;
}

/* The grandchild: a clean process image for wireguard-go, env its environment. Never returns. */
static void __attribute__((noreturn)) exec_wireguard_go(const char *ifname, int st, char **env)
{
	char *argv[] = {WG_GO, (char *)ifname, NULL};
	sigset_t none;
	int fd;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* an ignored disposition survives exec, and Go leaves an ignored SIGHUP alone */
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open("/dev/null", O_RDWR);
	if (chdir("/") < 0 || fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	/* it holds the private key too, and exec makes it dumpable again: no core file of it */
	setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});
	/* fabricd's sockets must not leak into it; st stays open until exec */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		for (int i = 3; i < 4096; i++)
			fcntl(i, F_SETFD, FD_CLOEXEC);
	}
	execvpe(WG_GO, argv, env);
	send_msg(st, MSG_EXEC_FAILED, errno);
	_exit(127);
}

/*
 * The intermediate child: a process group of its own (no terminal signal
 * meant for fabricd reaches wireguard-go; SIGHUP it ignores), then
 * wireguard-go as its child. Not a session of its own: with the scheduler's
 * autogroups (CONFIG_SCHED_AUTOGROUP, on in Debian's kernels) each session
 * is a CPU group of its own, and wireguard-go in one competed as a separate
 * group with the traffic it carries: `fabricd bench --reference` measured
 * 0.7 to 0.85 times the throughput of the same lab built by hand, with twice
 * the context switches, until this was setpgid() instead of setsid().
 * While the parent waits for the socket it reports an early exit; it leaves
 * when the parent closes ctl (wireguard-go is then reparented to init), and
 * kills wireguard-go first when the parent sends 'k'.
 */
static int write_pid_file(const char *ifname, pid_t pid);

static void __attribute__((noreturn))
start_intermediate(const char *ifname, int st, int ctl, char **env)
{
	int status;
	pid_t pid;

	setpgid(0, 0);
	pid = fork();
	if (pid < 0) {
		send_msg(st, MSG_EXEC_FAILED, errno);
		_exit(1);
	}
	if (pid == 0)
		exec_wireguard_go(ifname, st, env);
	/*
	 * The pid file is what lets a later fabricd adopt this wireguard-go: write
	 * it here, at once, so a fabricd killed right now still leaves it behind.
	 */
	write_pid_file(ifname, pid);
	send_msg(st, MSG_PID, pid);
	for (;;) {
		struct pollfd p = {.fd = ctl, .events = POLLIN};
		int n = poll(&p, 1, STEP_MS);
		char c = 0;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			send_msg(st, MSG_EXITED, status);
			_exit(0);
		}
		if (n <= 0 || (read(ctl, &c, 1) < 0 && errno == EINTR))
			continue;
		if (c == 'k') {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		_exit(0);
	}
}

static int write_pid_file(const char *ifname, pid_t pid)
{
	char path[RUN_PATH_MAX], tmp[RUN_PATH_MAX], line[32];
	int fd, len, ret = 0;

	wg_uapi_run_path(path, sizeof(path), ifname, "pid");
	wg_uapi_run_path(tmp, sizeof(tmp), ifname, "pid.tmp");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	len = snprintf(line, sizeof(line), "%d\n", (int)pid);
	if (fchmod(fd, 0644) < 0 || write(fd, line, (size_t)len) != len)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static pid_t read_pid_file(const char *ifname)
{
	char path[RUN_PATH_MAX], line[32];
	uint64_t v;
	ssize_t n;
	int fd;

	wg_uapi_run_path(path, sizeof(path), ifname, "pid");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return wg_uapi_parse_u64(line, INT32_MAX, &v) < 0 || v < 2 ? 0 : (pid_t)v;
}

/* Waits for the socket while reading the intermediate's reports; sets the error text. */
static int wait_ready(const char *ifname, int st, bool *pid_written)
{
	long deadline = now_ms() + START_TIMEOUT_MS;
	char path[RUN_PATH_MAX];
	struct start_msg m;
	int ret;

	while (now_ms() < deadline) {
		struct pollfd p = {.fd = st, .events = POLLIN};

		if (poll(&p, 1, STEP_MS) <= 0) {
			if (*pid_written && wg_uapi_exists(ifname))
				return 0;
			continue;
		}
		if (read(st, &m, sizeof(m)) != sizeof(m)) {
			wg_set_last_error("%s: starting %s failed", ifname, WG_GO);
			return -EPIPE;
		}
		if (m.kind == MSG_PID) {
			ret = write_pid_file(ifname, m.value);
			if (ret < 0) {
				wg_uapi_run_path(path, sizeof(path), ifname, "pid");
				wg_set_last_error("%s: cannot write %s: %s", ifname, path,
						  strerror(-ret));
				return ret;
			}
			*pid_written = true;
		} else if (m.kind == MSG_EXEC_FAILED) {
			wg_set_last_error("%s: cannot run %s: %s: install the wireguard-go package",
					  ifname, WG_GO, strerror(m.value));
			return -m.value;
		} else if (WIFSIGNALED(m.value)) {
			wg_set_last_error("%s: %s was killed by signal %d", ifname, WG_GO,
					  WTERMSIG(m.value));
			return -ECHILD;
		} else {
			wg_set_last_error(
			    "%s: %s exited with status %d: is /dev/net/tun available?", ifname,
			    WG_GO, WEXITSTATUS(m.value));
			return -ECHILD;
		}
	}
	wg_uapi_run_path(path, sizeof(path), ifname, "sock");
	wg_set_last_error("%s: %s did not answer on %s within %d ms", ifname, WG_GO, path,
			  START_TIMEOUT_MS);
	return -ETIMEDOUT;
}

/* Starts wireguard-go for ifname and waits until it answers; the error text is set. */
static int start_wireguard_go(const char *ifname)
{
	int st[2] = {-1, -1}, ctl[2] = {-1, -1};
	bool pid_written = false;
	char path[RUN_PATH_MAX], **env = NULL;
	pid_t mid = -1;
	int ret;

	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	if (wg_uapi_exists(ifname)) {
		wg_set_last_error("%s: a wireguard-go already runs for it", ifname);
		return -EEXIST;
	}
	if (if_nametoindex(ifname)) {
		wg_set_last_error("%s: a network interface of that name exists and no wireguard-go "
				  "answers for it: remove it or choose another name",
				  ifname);
		return -EEXIST;
	}
	env = wireguard_go_env();
	/* ctl is a socket so that 'k' to an intermediate already gone cannot raise SIGPIPE */
	if (!env || (mkdir(WG_UAPI_RUN_DIR, 0755) < 0 && errno != EEXIST) ||
	    pipe2(st, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 || (mid = fork()) < 0) {
		ret = env ? -errno : -ENOMEM;
		wg_set_last_error("%s: cannot start %s: %s", ifname, WG_GO, strerror(-ret));
		goto out;
	}
	if (mid == 0) {
		close(st[0]);
		close(ctl[1]); /* or it would never see the parent close ctl */
		start_intermediate(ifname, st[1], ctl[0], env);
	}
	close(st[1]); /* so that a dead intermediate reads as EOF */
	st[1] = -1;
	ret = wait_ready(ifname, st[0], &pid_written);
	if (ret < 0)
		send(ctl[1], "k", 1, MSG_NOSIGNAL);
out:
	for (int i = 0; i < 2; i++) {
		if (st[i] >= 0)
			close(st[i]);
		if (ctl[i] >= 0)
			close(ctl[i]);
	}
	/* with ctl closed the intermediate leaves; wireguard-go is then init's child */
	while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	if (ret < 0 && pid_written) {
		wg_uapi_run_path(path, sizeof(path), ifname, "pid");
		unlink(path);
	}
	free(env); /* its strings are environ's and literals */
	return ret;
}

static bool same_netns(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/net", &b) < 0)
		return false;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/*
 * Whether pid runs exactly "wireguard-go IFNAME" (from any directory) in our
 * network namespace. A zombie has no command line: it does not match.
 */
static bool is_our_wireguard_go(pid_t pid, const char *ifname)
{
	char path[64], buf[256];
	const char *base;
	size_t len0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	len0 = strlen(buf);
	/* two arguments: "arg0\0arg1\0" and nothing more */
	if (len0 + 1 >= (size_t)n || len0 + strlen(buf + len0 + 1) + 2 != (size_t)n)
		return false;
	base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	return !strcmp(base, WG_GO) && !strcmp(buf + len0 + 1, ifname) && same_netns(pid);
}

static pid_t find_wireguard_go(const char *ifname)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	uint64_t v;

	while (d && !found && (e = readdir(d))) {
		if (wg_uapi_parse_u64(e->d_name, INT32_MAX, &v) == 0 && (pid_t)v != getpid() &&
		    is_our_wireguard_go((pid_t)v, ifname))
			found = (pid_t)v;
	}
	if (d)
		closedir(d);
	return found;
}

/* Signals, then waits until it is gone (pidfd readable, or no longer wireguard-go). */
static bool signal_and_wait(pid_t pid, int pidfd, const char *ifname, int sig)
{
	long deadline = now_ms() + STOP_TIMEOUT_MS;

	if (pidfd >= 0)
		pidfd_send_signal(pidfd, sig, NULL, 0);
	else
		kill(pid, sig);
	for (;;) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		struct timespec step = {.tv_nsec = STEP_MS * 1000000L};

		if (pidfd >= 0 ? poll(&p, 1, 0) > 0 : !is_our_wireguard_go(pid, ifname))
			return true;
		if (now_ms() >= deadline)
			return false;
		nanosleep(&step, NULL);
	}
}

/* SIGTERM, a bounded wait, then SIGKILL. 0 when it is gone. */
static int stop_process(pid_t pid, const char *ifname)
{
	/* without pidfds (old kernels, valgrind) the PID is checked on each step instead */
	int pidfd = pidfd_open(pid, 0);
	int ret = 0;

	/* checked again after pidfd_open: a reused PID can no longer be signalled by mistake */
	if (is_our_wireguard_go(pid, ifname) && !signal_and_wait(pid, pidfd, ifname, SIGTERM) &&
	    !signal_and_wait(pid, pidfd, ifname, SIGKILL))
		ret = -ETIMEDOUT;
	waitpid(pid, NULL, WNOHANG); /* reaps it should it be our own child */
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

int wg_uapi_destroy(const char *ifname)
{
	char sock[RUN_PATH_MAX], pidf[RUN_PATH_MAX];
	pid_t pid, target = 0;
	struct stat st;
	bool have_sock;
	int ret;

	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	wg_uapi_run_path(sock, sizeof(sock), ifname, "sock");
	wg_uapi_run_path(pidf, sizeof(pidf), ifname, "pid");
	have_sock = lstat(sock, &st) == 0;
	pid = read_pid_file(ifname);
	if (pid && is_our_wireguard_go(pid, ifname))
		target = pid;
	else if (have_sock || pid)
		/* no valid PID file: started by someone else, or the file is stale */
		target = find_wireguard_go(ifname);
	if (target) {
		ret = stop_process(target, ifname);
		if (ret < 0) {
			wg_set_last_error("%s: cannot stop %s (pid %d): %s", ifname, WG_GO,
					  (int)target, strerror(-ret));
			return ret;
		}
	}
	unlink(pidf);
	/* wireguard-go removes its socket on SIGTERM; this covers SIGKILL and stale files */
	if (have_sock)
		unlink(sock);
	if (!target) {
		wg_set_last_error("%s: no %s runs for it in this network namespace", ifname, WG_GO);
		return -ENODEV;
	}
	return 0;
}

/* The owner mark on the TUN link wireguard-go made, over rtnetlink, by name. */
static int set_alias(const char *ifname, const char *alias)
{
	char buf[NL_MSG_BUF], err[NL_EXTACK_MAX + 64];
	struct link_change c = {.mask = LINK_SET_ALIAS};
	struct nl_sock *s = nl_route_shared(); /* the process's (netlink/nl.h) */
	struct nlmsghdr *nlh;
	int ret;

	snprintf(c.alias, sizeof(c.alias), "%s", alias);
	if (!s) {
		ret = -errno;
		wg_set_last_error("%s: cannot open an rtnetlink socket to set its alias: %s",
				  ifname, strerror(-ret));
		return ret;
	}
	nlh = nl_msg_start(s, buf, RTM_NEWLINK, 0); /* zeroes buf */
	link_put_change(nlh, 0, ifname, &c);
	ret = nl_request(s, nlh, NULL, NULL);
	if (ret < 0)
		wg_set_last_error("%s: %s runs, but setting its alias \"%s\" failed: %s", ifname,
				  WG_GO, alias, nl_strerror(s, ret, err, sizeof(err)));
	return ret;
}

/*
 * Calls fn with a copy of each socket pid has (pidfd_getfd): the same socket,
 * so an option set on the copy is set on the process's. Best effort: a
 * process gone or an fd closed meanwhile is skipped.
 */
static void for_each_socket(pid_t pid, void (*fn)(int fd, int domain, int protocol, void *data),
			    void *data)
{
	char path[64];
	int pidfd;
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	pidfd = pid > 0 ? pidfd_open(pid, 0) : -1;
	dir = pidfd >= 0 ? opendir(path) : NULL;
	while (dir && (e = readdir(dir))) {
		int domain = 0, protocol = -1, fd;
		socklen_t len = sizeof(int);
		char *end;
		long target = strtol(e->d_name, &end, 10);

		if (*end || e->d_name[0] == '\0' || (fd = pidfd_getfd(pidfd, (int)target, 0)) < 0)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
		    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) == 0)
			fn(fd, domain, protocol, data);
		close(fd);
	}
	if (dir)
		closedir(dir);
	if (pidfd >= 0)
		close(pidfd);
}

static void widen_netlink(int fd, int domain, int protocol, void *data)
{
	int size = WG_GO_NL_RCVBUF;

	(void)data;
	if (domain == AF_NETLINK && protocol == NETLINK_ROUTE)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
}

/*
 * wireguard-go exits when its rtnetlink listener's socket overflows (ENOBUFS:
 * "Failed to read packet from TUN device: failed to receive netlink
 * message"), and it has the default receive buffer (net.core.rmem_default,
 * 208 KiB). A node with a thousand bridges gets their carrier changes from
 * the kernel's linkwatch a hundred links at a time for seconds after a
 * build: measured at 1024 vnets, wireguard-go died within seconds of a
 * daemon starting beside it. So its rtnetlink sockets get the buffer
 * fabricd's own watch has. Without it all stays as before.
 */
static void widen_netlink_buffers(pid_t pid)
{
	for_each_socket(pid, widen_netlink, NULL);
}

struct udp_widening {
	unsigned int sockets, widened;
};

static void widen_udp(int fd, int domain, int protocol, void *data)
{
	struct udp_widening *w = data;
	int size = WG_GO_UDP_BUF, rcv = 0, snd = 0;
	socklen_t len = sizeof(int);

	if ((domain != AF_INET && domain != AF_INET6) || protocol != IPPROTO_UDP)
		return;
	w->sockets++;
	/* the kernel reports twice what was set (its bookkeeping): at least size is enough */
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len) == 0 && rcv >= size &&
	    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &len) == 0 && snd >= size)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) == 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) == 0)
		w->widened++;
}

/* Whether ifname is administratively up: wireguard-go binds its UDP sockets once it is. */
static bool link_is_up(const char *ifname)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up = false;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		up = ifr.ifr_flags & IFF_UP;
	if (fd >= 0)
		close(fd);
	return up;
}

int wg_uapi_widen_udp_buffers(const char *ifname, unsigned int wait_ms)
{
	struct udp_widening w = {0};
	long deadline = now_ms() + (long)wait_ms;
	pid_t pid;

	if (!wg_ifname_valid(ifname) || !link_is_up(ifname) || !(pid = wg_uapi_pid(ifname)))
		return 0;
	/* wireguard-go binds when it reads that its device went up: a moment after the link op */
	for (;;) {
		for_each_socket(pid, widen_udp, &w);
		if (w.sockets || now_ms() >= deadline)
			break;
		usleep(STEP_MS * 1000);
	}
	return (int)w.widened;
}

int wg_uapi_create(const char *ifname, const char *alias)
{
	char why[512], more[512];
	int ret;

	if (!wg_ifname_valid(ifname) || !alias || !*alias || strlen(alias) > WG_ALIAS_MAX)
		return -EINVAL;
	ret = start_wireguard_go(ifname);
	if (ret < 0)
		return ret;
	widen_netlink_buffers(read_pid_file(ifname));
	/*
	 * A fabricd killed before this point leaves an unmarked device, which
	 * the PID file identifies (wg_uapi_started_by_fabricd). Failing here,
	 * stop wireguard-go again: an unmarked device must not stay behind.
	 */
	ret = set_alias(ifname, alias);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", wg_last_error());
		if (wg_uapi_destroy(ifname) < 0) {
			/* wg_last_error() is the buffer written to: copy it first */
			snprintf(more, sizeof(more), "%s", wg_last_error());
			wg_set_last_error("%s; stopping it again failed too: %s", why, more);
		} else {
			wg_set_last_error("%s (stopped it again)", why);
		}
	}
	return ret;
}

bool wg_uapi_started_by_fabricd(const char *ifname)
{
	pid_t pid;

	if (!wg_ifname_valid(ifname))
		return false;
	pid = read_pid_file(ifname);
	return pid && is_our_wireguard_go(pid, ifname);
}

pid_t wg_uapi_pid(const char *ifname)
{
	pid_t pid;

	if (!wg_ifname_valid(ifname))
		return 0;
	pid = read_pid_file(ifname);
	if (pid && is_our_wireguard_go(pid, ifname))
		return pid;
	return find_wireguard_go(ifname);
}
