/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/lock.h - the per-node lock: every command that changes a node
 * (apply, down, set-transport, each pass of run) holds it, so that two
 * writers never interleave their changes. check, render, plan and status
 * never take it.
 *
 * The lock is an flock(2) on /run/fabricd/net<inode>.lock: one per network
 * namespace, the kernel state it protects, whatever node name a command is
 * given (a `down -n` with another spelling than the daemon's is still
 * serialized with it); released by the kernel when its holder exits,
 * however it exits. The holder writes "PID COMMAND" into the file so that
 * a waiter can say who holds it.
 */
#ifndef FABRICD_LOCK_H
#define FABRICD_LOCK_H

#include <stdbool.h>

#define NODE_LOCK_DIR "/run/fabricd"
/* How long a command waits for the lock by default (--lock-wait). */
#define NODE_LOCK_WAIT_S 30

struct node_lock {
	int fd;	   /* -1: not held */
	bool node; /* the node lock (node_lock_take), not the daemon's */
	char path[256];
};

/*
 * Takes node's lock for command ("apply", "down", ...), waiting up to
 * wait_ms. 0; -EWOULDBLOCK when another process still holds it after
 * wait_ms (logged, naming its PID and command, unless quiet); -EINTR when
 * SIGTERM or SIGINT is pending while it waits (blocked, as the daemon does:
 * logged); another -errno when the lock file cannot be used (logged).
 */
int node_lock_take(struct node_lock *l, const char *node, const char *command, unsigned int wait_ms,
		   bool quiet);
/*
 * The daemon's own lock, /run/fabricd/daemon.net<inode>.lock, held
 * for its lifetime beside the node lock of each pass: a second `run` for
 * the same node and namespace refuses to start instead of undoing the first
 * one's passes between them. 0; -EWOULDBLOCK when another daemon holds it
 * (logged, naming its PID); another -errno (logged).
 */
int node_daemon_lock_take(struct node_lock *l, const char *node, const char *cluster);
/*
 * Whether a daemon keeps this namespace's node; holder gets its "PID
 * COMMAND", cluster (may be NULL) the cluster it keeps ("" if not said).
 */
bool node_daemon_running(char *holder, size_t len, char *cluster, size_t clen);
/* Releases either (a no-op when not held). */
void node_lock_release(struct node_lock *l);
/* Whether this process holds its node's lock now (node_lock_take): it may change the node. */
bool node_lock_held(void);

#endif
