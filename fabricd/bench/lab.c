// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lab.c - the bench lab's namespaces and processes: claiming names,
 * making network and mount namespaces the way `ip netns add` and
 * `unshare --mount=FILE` do, running programs inside them, and removing
 * everything again. The links, the definition and the apply are in
 * bench/labnet.c.
 */
#define _GNU_SOURCE /* unshare, setns, close_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/lab.h"
#include "bench/labnet.h"
#include "bench/labref.h"
#include "base/log.h"

#define NETNS_DIR "/run/netns"

/* After Ctrl-C a failing step is expected: say "interrupted" once, not why each step stopped. */
#define lab_error(...)                                                                             \
	do {                                                                                       \
		if (!bench_stop)                                                                   \
			log_error(__VA_ARGS__);                                                    \
	} while (0)

static const char *const roles[LAB_N_NS] = {"sw", "n1", "n2", "g1", "g2"};

void lab_path_of(enum bench_path p, struct lab_path *out)
{
	switch (p) {
	case BENCH_RAW:
		*out = (struct lab_path){LAB_N1, LAB_N2, "192.0.2.12", 5201};
		break;
	case BENCH_PLAIN:
		*out = (struct lab_path){LAB_G1, LAB_G2, "10.100.0.2", 5202};
		break;
	default:
		*out = (struct lab_path){LAB_G1, LAB_G2, "10.200.0.2", 5203};
		break;
	}
}

void lab_init(struct bench_lab *lab, enum wg_backend backend, enum wg_backend_choice choice,
	      bool verbose, bool reference)
{
	char id[8], dir[64]; /* copies: snprintf may not read what it writes */

	memset(lab, 0, sizeof(*lab));
	snprintf(id, sizeof(id), "%s%04x", reference ? "fr" : "fb",
		 (unsigned int)getpid() & 0xffff);
	snprintf(dir, sizeof(dir), "/run/fabricd-bench-%s", id);
	memcpy(lab->id, id, sizeof(id));
	memcpy(lab->dir, dir, sizeof(dir));
	for (int i = 0; i < LAB_N_NS; i++) {
		snprintf(lab->ns[i], sizeof(lab->ns[i]), "%s-%s", id, roles[i]);
		lab->ns_fd[i] = -1;
	}
	for (int i = 0; i < LAB_NODES; i++) {
		snprintf(lab->mnt[i], sizeof(lab->mnt[i]), "%s/n%d.mnt", dir, i + 1);
		snprintf(lab->key[i], sizeof(lab->key[i]), "%s/n%d.key", dir, i + 1);
		lab->mnt_fd[i] = -1;
	}
	snprintf(lab->config, sizeof(lab->config), "%s/cluster.json", dir);
	lab->backend = backend;
	lab->backend_choice = choice;
	lab->verbose = verbose;
	lab->reference = reference;
}

/* --- waiting and spawning ---------------------------------------------------- */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void lab_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL); /* a signal cuts it short, which is what the callers want */
}

static int kill_and_reap(pid_t pid, int ret)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return ret;
}

int lab_wait(pid_t pid, int timeout_ms)
{
	long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int pidfd = (int)pidfd_open(pid, 0);
	int status, ret;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		long left;

		if (r == pid) {
			ret = status;
			break;
		}
		if (r < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (bench_stop) {
			ret = kill_and_reap(pid, -EINTR);
			break;
		}
		left = deadline < 0 ? 200 : deadline - now_ms();
		if (left <= 0) {
			ret = kill_and_reap(pid, -ETIMEDOUT);
			break;
		}
		if (left > 200)
			left = 200; /* look at bench_stop now and then */
		if (pidfd >= 0) {
			struct pollfd p = {.fd = pidfd, .events = POLLIN};

			poll(&p, 1, (int)left);
		} else {
			/* no pidfd (valgrind, old kernels): poll the status */
			lab_sleep_ms(left < 20 ? left : 20);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

/* In a child: enter where's network namespace (and mount namespace, for a node). */
static int lab_enter(const struct bench_lab *lab, enum lab_where where)
{
	if (where == LAB_HOST)
		return 0;
	if ((where == LAB_N1 || where == LAB_N2) &&
	    setns(lab->mnt_fd[where - LAB_N1], CLONE_NEWNS) < 0)
		return -errno;
	if (setns(lab->ns_fd[where], CLONE_NEWNET) < 0)
		return -errno;
	return chdir("/") < 0 ? -errno : 0;
}

static void child_defaults(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

pid_t lab_spawn(const struct bench_lab *lab, enum lab_where where, char *const argv[], int out_fd,
		int err_fd)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		child_defaults();
		if (null < 0 || lab_enter(lab, where) < 0)
			_exit(126);
		if (dup2(null, 0) < 0 || dup2(out_fd >= 0 ? out_fd : null, 1) < 0 ||
		    dup2(err_fd >= 0 ? err_fd : null, 2) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int lab_run_in(const struct bench_lab *lab, enum lab_where where,
	       int (*fn)(const struct bench_lab *lab, void *arg), void *arg, int timeout_ms)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int rc;

		child_defaults();
		if (lab_enter(lab, where) < 0) {
			log_error("bench: cannot enter the namespaces of %s: %s", lab->ns[where],
				  strerror(errno));
			_exit(1);
		}
		rc = fn(lab, arg);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	status = lab_wait(pid, timeout_ms);
	if (status < 0)
		return status;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* --- namespaces ------------------------------------------------------------------ */

static int ns_id_of(int fd, struct lab_ns_id *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* /run/netns as `ip netns add` prepares it: a shared mount, so unmounts propagate. */
static int prepare_netns_dir(void)
{
	bool made = false;

	if (mkdir(NETNS_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	while (mount("", NETNS_DIR, "none", MS_SHARED | MS_REC, NULL) < 0) {
		if (errno != EINVAL || made)
			return -errno;
		if (mount(NETNS_DIR, NETNS_DIR, "none", MS_BIND | MS_REC, NULL) < 0)
			return -errno;
		made = true;
	}
	return 0;
}

/* A named network namespace, exactly as `ip netns add NAME`: a child unshares and binds. */
static int make_netns(struct bench_lab *lab, int i)
{
	char path[96];
	pid_t pid;
	int fd, status;

	snprintf(path, sizeof(path), "%s/%s", NETNS_DIR, lab->ns[i]);
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	lab->ns_made[i] = true;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0 ||
		    mount("/proc/self/ns/net", path, "none", MS_BIND, NULL) < 0)
			_exit(errno & 0x7f);
		_exit(0);
	}
	status = lab_wait(pid, 10000);
	if (status < 0)
		return status;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return WIFEXITED(status) ? -WEXITSTATUS(status) : -ECHILD;
	lab->ns_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
	if (lab->ns_fd[i] < 0)
		return -errno;
	return ns_id_of(lab->ns_fd[i], &lab->ns_id[i]);
}

/*
 * A node's mount namespace, as `unshare --mount=FILE --propagation private`
 * makes it, with a tmpfs on /run/wireguard: wireguard-go's socket directory
 * is not per network namespace, so each node needs its own.
 */
static int make_mntns(struct bench_lab *lab, int node)
{
	int ready[2] = {-1, -1}, go[2] = {-1, -1}, err = 0, fd, status;
	char src[64];
	pid_t pid = -1;

	fd = open(lab->mnt[node], O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	lab->mnt_made[node] = true;
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		err = errno;
		goto out;
	}
	if (pid == 0) {
		char c;

		close(ready[0]);
		close(go[1]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
			err = errno;
		if (!err) {
			/* drop this copy's references to other namespaces (best effort) */
			umount2(NETNS_DIR, MNT_DETACH);
			umount2(lab->dir, MNT_DETACH);
			/* the source names the run, so a leftover can be told from others' */
			if ((mkdir("/run/wireguard", 0755) < 0 && errno != EEXIST) ||
			    mount(lab->dir + strlen("/run/"), "/run/wireguard", "tmpfs",
				  MS_NOSUID | MS_NODEV, "mode=0755") < 0)
				err = errno;
		}
		if (write(ready[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	ready[1] = -1;
	close(go[0]);
	go[0] = -1;
	if (read(ready[0], &err, sizeof(err)) != sizeof(err))
		err = ECHILD;
	if (!err) {
		snprintf(src, sizeof(src), "/proc/%d/ns/mnt", (int)pid);
		if (mount(src, lab->mnt[node], "none", MS_BIND, NULL) < 0)
			err = errno;
	}
out:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]); /* the child's read sees EOF and it leaves */
	}
	if (pid > 0) {
		status = lab_wait(pid, 10000);
		if (status < 0 && !err)
			err = -status;
	}
	if (err)
		return -err;
	lab->mnt_fd[node] = open(lab->mnt[node], O_RDONLY | O_CLOEXEC);
	if (lab->mnt_fd[node] < 0)
		return -errno;
	return ns_id_of(lab->mnt_fd[node], &lab->mnt_id[node]);
}

/* Refuses when any name of this lab exists already: a namespace, the directory, a link. */
static int check_names(const struct bench_lab *lab)
{
	struct if_nameindex *ifs;
	struct stat st;
	char path[96];
	int ret = 0;

	for (int i = 0; i < LAB_N_NS; i++) {
		snprintf(path, sizeof(path), "%s/%s", NETNS_DIR, lab->ns[i]);
		if (lstat(path, &st) == 0) {
			log_error(
			    "bench: network namespace %s already exists: another fabricd bench "
			    "runs with ID %s, or one was killed; if it is stale, remove it with "
			    "`ip netns del %s` and try again",
			    lab->ns[i], lab->id, lab->ns[i]);
			ret = -EEXIST;
		}
	}
	if (lstat(lab->dir, &st) == 0) {
		log_error("bench: %s already exists: another fabricd bench runs with ID %s, or "
			  "one was killed; if it is stale, unmount and remove it (umount %s/*.mnt "
			  "%s; rm -r %s)",
			  lab->dir, lab->id, lab->dir, lab->dir, lab->dir);
		ret = -EEXIST;
	}
	/* the lab's links never live here, but one named like them would confuse anyone */
	ifs = if_nameindex();
	for (struct if_nameindex *p = ifs; p && p->if_index; p++) {
		if (!strncmp(p->if_name, lab->id, strlen(lab->id))) {
			log_error("bench: interface %s in this namespace carries the bench ID %s: "
				  "remove or rename it, or run the bench from another PID",
				  p->if_name, lab->id);
			ret = -EEXIST;
		}
	}
	if (ifs)
		if_freenameindex(ifs);
	return ret;
}

int lab_up(struct bench_lab *lab)
{
	int ret;

	ret = check_names(lab);
	if (ret < 0)
		return -1;
	/* mkdir is the claim: it fails if another run took the ID meanwhile */
	if (mkdir(lab->dir, 0700) < 0) {
		lab_error("bench: cannot create %s: %s", lab->dir, strerror(errno));
		return -1;
	}
	lab->dir_made = true;
	/* a private mount of its own: mount namespace files may not sit on a shared mount */
	if (mount(lab->dir, lab->dir, "none", MS_BIND, NULL) < 0) {
		lab_error("bench: cannot bind-mount %s: %s", lab->dir, strerror(errno));
		return -1;
	}
	lab->dir_mounted = true;
	if (mount("none", lab->dir, "none", MS_PRIVATE, NULL) < 0) {
		lab_error("bench: cannot make %s a private mount: %s", lab->dir, strerror(errno));
		return -1;
	}
	ret = prepare_netns_dir();
	if (ret < 0) {
		lab_error("bench: cannot prepare %s: %s", NETNS_DIR, strerror(-ret));
		return -1;
	}
	for (int i = 0; i < LAB_N_NS && !bench_stop; i++) {
		ret = make_netns(lab, i);
		if (ret < 0) {
			lab_error("bench: cannot create network namespace %s: %s", lab->ns[i],
				  strerror(-ret));
			return -1;
		}
	}
	for (int i = 0; i < LAB_NODES && !bench_stop; i++) {
		ret = make_mntns(lab, i);
		if (ret < 0) {
			lab_error("bench: cannot create the mount namespace %s of node n%d: %s",
				  lab->mnt[i], i + 1, strerror(-ret));
			return -1;
		}
	}
	if (bench_stop)
		return -1;
	return lab->reference ? labref_build(lab) : labnet_build(lab);
}

/* --- processes and removal ----------------------------------------------------- */

static bool same_ns(const char *path, const struct lab_ns_id *id)
{
	struct stat st;

	return id->ino && stat(path, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* Whether pid runs in any namespace of the lab (nodes only when nodes_only). */
static bool in_lab(const struct bench_lab *lab, long pid, bool nodes_only)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
	for (int i = 0; i < LAB_N_NS; i++) {
		if (nodes_only && i != LAB_N1 && i != LAB_N2)
			continue;
		if (same_ns(path, &lab->ns_id[i]))
			return true;
	}
	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", pid);
	for (int i = 0; i < LAB_NODES; i++) {
		if (same_ns(path, &lab->mnt_id[i]))
			return true;
	}
	return false;
}

/* Lab processes named comm (NULL: all); how many were found (at most max kept). */
static size_t scan(const struct bench_lab *lab, const char *comm, bool nodes_only, pid_t *pids,
		   size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d))) {
		char path[64], name[32] = "";
		char *end;
		long v = strtol(e->d_name, &end, 10);
		FILE *f;

		if (*end || v <= 1 || v == getpid() || !in_lab(lab, v, nodes_only))
			continue;
		if (comm) {
			snprintf(path, sizeof(path), "/proc/%ld/comm", v);
			f = fopen(path, "re");
			if (!f)
				continue;
			if (!fgets(name, sizeof(name), f))
				name[0] = '\0';
			fclose(f);
			name[strcspn(name, "\n")] = '\0';
			if (strcmp(name, comm))
				continue;
		}
		if (n < max)
			pids[n] = (pid_t)v;
		n++;
	}
	if (d)
		closedir(d);
	return n < max ? n : max;
}

size_t lab_find(const struct bench_lab *lab, const char *comm, pid_t *pids, size_t max)
{
	return scan(lab, comm, true, pids, max);
}

/* SIGTERM, a bounded wait, then SIGKILL, for every process left in the lab. */
static int end_processes(const struct bench_lab *lab)
{
	pid_t pids[LAB_MAX_PROCS];
	size_t n = 0;

	for (int round = 0; round < 6; round++) {
		n = scan(lab, NULL, false, pids, LAB_MAX_PROCS);
		if (!n)
			return 0;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], round < 2 ? SIGTERM : SIGKILL);
		for (int t = 0; t < 50 && scan(lab, NULL, false, pids, LAB_MAX_PROCS); t++) {
			/* our own children must be reaped to leave the namespace */
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			lab_sleep_ms(20);
		}
	}
	n = scan(lab, NULL, false, pids, LAB_MAX_PROCS);
	for (size_t i = 0; i < n; i++)
		log_error("bench: process %d in the lab's namespaces survived SIGKILL: look at it "
			  "with `ps -p %d`",
			  (int)pids[i], (int)pids[i]);
	return n ? -1 : 0;
}

static void remove_files(const struct bench_lab *lab)
{
	DIR *d = opendir(lab->dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[384];

		if (e->d_name[0] == '.' || strstr(e->d_name, ".mnt"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", lab->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

int lab_down(struct bench_lab *lab)
{
	int ret = end_processes(lab);
	char path[96];

	for (int i = LAB_NODES - 1; i >= 0; i--) {
		if (lab->mnt_fd[i] >= 0)
			close(lab->mnt_fd[i]);
		lab->mnt_fd[i] = -1;
		if (!lab->mnt_made[i])
			continue;
		if (umount2(lab->mnt[i], MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
			log_error("bench: cannot unmount %s: %s; run `umount %s`", lab->mnt[i],
				  strerror(errno), lab->mnt[i]);
			ret = -1;
		}
		if (unlink(lab->mnt[i]) < 0 && errno != ENOENT)
			ret = -1;
		lab->mnt_made[i] = false;
	}
	if (lab->dir_made)
		remove_files(lab);
	if (lab->dir_mounted && umount2(lab->dir, MNT_DETACH) < 0) {
		log_error("bench: cannot unmount %s: %s; run `umount %s`", lab->dir,
			  strerror(errno), lab->dir);
		ret = -1;
	}
	lab->dir_mounted = false;
	if (lab->dir_made && rmdir(lab->dir) < 0 && errno != ENOENT) {
		log_error("bench: cannot remove %s: %s; remove it by hand", lab->dir,
			  strerror(errno));
		ret = -1;
	}
	lab->dir_made = false;
	for (int i = LAB_N_NS - 1; i >= 0; i--) {
		if (lab->ns_fd[i] >= 0)
			close(lab->ns_fd[i]);
		lab->ns_fd[i] = -1;
		if (!lab->ns_made[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", NETNS_DIR, lab->ns[i]);
		/* as `ip netns del`: detach, then remove the file */
		if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
			log_error("bench: cannot unmount %s: %s; run `ip netns del %s`", path,
				  strerror(errno), lab->ns[i]);
			ret = -1;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			log_error("bench: cannot remove %s: %s; run `ip netns del %s`", path,
				  strerror(errno), lab->ns[i]);
			ret = -1;
		}
		lab->ns_made[i] = false;
	}
	return ret;
}
