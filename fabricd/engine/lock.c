// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/lock.c - the per-node lock (see lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/lock.h"

#define LOCK_POLL_MS 20

/* The node locks (not the daemon's) this process holds. */
static int nodes_held;
/*
 * The last holder line could not be written (a full /run): said once, not
 * at each of the daemon's passes, and once when one is written again.
 */
static bool holder_unrecorded;

/*
 * Whether a stop is waiting: the daemon blocks SIGTERM and SIGINT (it reads
 * them from a signalfd), so while it waits here they stay pending; another
 * command is ended by them at once.
 */
static bool stop_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

/* Whether process pid is there: the holder's line outlives the process that wrote it. */
static bool is_running(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/*
 * "PID COMMAND" of the holder, as it wrote it; "" when unreadable, or when
 * that process is gone (another program may hold the lock without writing
 * a line, under one left by a fabricd that ended).
 */
static void read_holder(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] && !is_running(strtol(buf, NULL, 10)))
		buf[0] = '\0';
}

/* What a lock held by a process that did not say (or is gone) is said to be held by. */
#define UNKNOWN_HOLDER "not recorded; fuser -v on the lock file names it"

/* "PID COMMAND", and for the daemon a second line "cluster NAME" (down reads it) */
static int write_holder(int fd, const char *command, const char *cluster)
{
	char line[192];
	int n = cluster ? snprintf(line, sizeof(line), "%ld %s\ncluster %s\n", (long)getpid(),
				   command, cluster)
			: snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), command);

	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t)n, 0) != n)
		return -errno;
	return 0;
}

/* kind: "" for the node lock, "daemon." for the daemon's; one per network namespace */
static void lock_path(struct node_lock *l, const char *kind)
{
	l->node = false;
	snprintf(l->path, sizeof(l->path), "%s/%snet%llu.lock", NODE_LOCK_DIR, kind, netns_inode());
}

/* 0 or -errno with why filled */
static int open_node_lock_file(struct node_lock *l, const char *kind, char *why, size_t whylen)
{
	lock_path(l, kind);
	if (mkdir(NODE_LOCK_DIR, 0755) < 0 && errno != EEXIST) {
		int ret = -errno;

		snprintf(why, whylen, "%s", strerror(-ret));
		return ret;
	}
	/* O_CLOEXEC: a wireguard-go started while it is held must not inherit it */
	l->fd = open_lock_file(l->path, why, whylen);
	return l->fd < 0 ? l->fd : 0;
}

int node_lock_take(struct node_lock *l, const char *node, const char *command, unsigned int wait_ms,
		   bool quiet)
{
	long long deadline = monotonic_ms() + wait_ms;
	struct timespec pause = {.tv_nsec = LOCK_POLL_MS * 1000000L};
	char holder[128], why[512];
	bool told = false;
	int ret;

	l->fd = -1;
	ret = open_node_lock_file(l, "", why, sizeof(why));
	if (ret < 0) {
		log_error("node %s: cannot open the lock %s: %s%s", node, l->path, why,
			  ret == -EPERM ? ""
					: "; commands that change the node need " NODE_LOCK_DIR
					  " writable (a tmpfs, as /run is)");
		return ret;
	}
	while (flock(l->fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			ret = -errno;
			log_error("node %s: cannot lock %s: %s", node, l->path, strerror(-ret));
			node_lock_release(l);
			return ret;
		}
		read_holder(l->fd, holder, sizeof(holder));
		if (monotonic_ms() >= deadline) {
			if (!quiet)
				log_error(
				    "node %s: busy: another fabricd (pid and command: %s) has "
				    "been changing it for more than %u s; try again when it "
				    "is done, or stop it (lock %s)",
				    node, holder[0] ? holder : UNKNOWN_HOLDER, wait_ms / 1000,
				    l->path);
			node_lock_release(l);
			return -EWOULDBLOCK;
		}
		if (stop_pending()) {
			log_info("node %s: stopped while waiting for another fabricd (pid and "
				 "command: %s); nothing was changed",
				 node, holder[0] ? holder : UNKNOWN_HOLDER);
			node_lock_release(l);
			return -EINTR;
		}
		if (!quiet && !told && wait_ms >= 1000) {
			log_info("node %s: waiting for another fabricd (pid and command: %s)", node,
				 holder[0] ? holder : UNKNOWN_HOLDER);
			told = true;
		}
		nanosleep(&pause, NULL);
	}
	ret = write_holder(l->fd, command, NULL);
	if (ret < 0 && !holder_unrecorded)
		log_warn("node %s: cannot record the lock's holder in %s: %s; a command waiting "
			 "for the lock cannot name this fabricd (said once until it can)",
			 node, l->path, strerror(-ret));
	else if (ret == 0 && holder_unrecorded)
		log_info("node %s: the lock's holder is recorded in %s again", node, l->path);
	holder_unrecorded = ret < 0;
	l->node = true;
	nodes_held++;
	/* a writer killed mid-write left its temporary file behind (a live one's stays) */
	remove_dead_temps(NODE_LOCK_DIR);
	return 0;
}

int node_daemon_lock_take(struct node_lock *l, const char *node, const char *cluster)
{
	char holder[128], why[512];
	int ret;

	l->fd = -1;
	ret = open_node_lock_file(l, "daemon.", why, sizeof(why));
	if (ret == 0 && flock(l->fd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	}
	if (ret == -EWOULDBLOCK) {
		read_holder(l->fd, holder, sizeof(holder));
		log_error("node %s: another fabricd run (pid and command: %s) already keeps this "
			  "node; stop it first, one daemon per node (lock %s)",
			  node, holder[0] ? holder : UNKNOWN_HOLDER, l->path);
	} else if (ret < 0) {
		log_error("node %s: cannot take the daemon's lock %s: %s", node, l->path, why);
	} else if ((ret = write_holder(l->fd, "run", cluster)) < 0) {
		log_warn("node %s: cannot record the daemon in %s: %s", node, l->path,
			 strerror(-ret));
		ret = 0;
	}
	if (ret < 0)
		node_lock_release(l);
	return ret;
}

/* The cluster the daemon's holder line names ("" when it names none). */
static void read_cluster(int fd, char *cluster, size_t len)
{
	char text[256], *line;
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);

	text[n > 0 ? n : 0] = '\0';
	line = strstr(text, "\ncluster ");
	cluster[0] = '\0';
	if (line) {
		snprintf(cluster, len, "%s", line + strlen("\ncluster "));
		cluster[strcspn(cluster, "\n")] = '\0';
	}
}

bool node_daemon_running(char *holder, size_t len, char *cluster, size_t clen)
{
	struct node_lock l;
	bool held;

	holder[0] = '\0';
	if (cluster)
		cluster[0] = '\0';
	lock_path(&l, "daemon.");
	l.fd = open(l.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (l.fd < 0)
		return false;
	held = flock(l.fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	if (held)
		read_holder(l.fd, holder, len);
	if (held && cluster)
		read_cluster(l.fd, cluster, clen);
	node_lock_release(&l);
	return held;
}

bool node_lock_held(void)
{
	return nodes_held > 0;
}

void node_lock_release(struct node_lock *l)
{
	if (l->fd < 0)
		return;
	if (l->node)
		nodes_held--;
	l->node = false;
	/* closing the last descriptor releases the flock */
	close(l->fd);
	l->fd = -1;
}
