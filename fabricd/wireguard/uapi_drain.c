// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wireguard/uapi_drain.c - back-pressure for wireguard-go's link-event socket.
 *
 * wireguard-go (0.0.20220316) listens to rtnetlink link and route events and
 * closes its device when that socket overflows (ENOBUFS). Every link change
 * fabricd makes raises one or more such events, so a large apply (thousands
 * of bridges and VXLAN devices) used to kill it on a busy machine even with a
 * fixed pause between batches: the pause is enough only while wireguard-go
 * gets the CPU. Instead, before each batch, fabricd looks at how much is
 * queued on wireguard-go's netlink sockets (/proc/net/netlink, Rmem, matched
 * to the sockets in /proc/PID/fd) and waits while it is above a fraction of
 * the default receive buffer: wireguard-go then never falls behind by more
 * than that, whatever the load.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wireguard/uapi.h"

/* a quarter of the default 208 KiB receive buffer (net.core.rmem_default) */
#define DRAIN_LIMIT_BYTES (52 * 1024)
#define DRAIN_STEP_US	  1000
#define DRAIN_MAX_STEPS	  3000 /* 3 s: then go on, as before */
#define MAX_SOCKETS	  16

/* The socket inodes of pid's open file descriptors; their number. */
static size_t socket_inodes(pid_t pid, unsigned long *inodes, size_t max)
{
	char dir[64], path[320], target[64];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && n < max && (e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (sscanf(target, "socket:[%lu]", &inodes[n]) == 1)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* The most bytes queued on one of the NETLINK_ROUTE sockets among inodes; -1 if unreadable. */
static long queued_bytes(const unsigned long *inodes, size_t n)
{
	FILE *f = fopen("/proc/net/netlink", "re");
	char line[256];
	long most = 0;

	if (!f)
		return -1;
	/* sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode */
	while (fgets(line, sizeof(line), f)) {
		unsigned long inode;
		char sk[32];
		int proto;
		unsigned int portid;
		char groups[16];
		long rmem, wmem, dump, locks, drops;

		if (sscanf(line, "%31s %d %u %15s %ld %ld %ld %ld %ld %lu", sk, &proto, &portid,
			   groups, &rmem, &wmem, &dump, &locks, &drops, &inode) != 10 ||
		    proto != 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (inodes[i] == inode && rmem > most)
				most = rmem;
		}
	}
	fclose(f);
	return most;
}

/* wireguard-go's pid and socket inodes, looked up again only when it changed */
static struct {
	pid_t pid;
	size_t n;
	unsigned long inodes[MAX_SOCKETS];
	bool stuck; /* it did not drain within the limit once: waiting does not help */
} cache;

void wg_uapi_wait_drained(const char *ifname)
{
	struct timespec step = {0, DRAIN_STEP_US * 1000L};
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)cache.pid);
	if (!cache.pid || access(path, F_OK) < 0) {
		cache.pid = wg_uapi_pid(ifname);
		cache.n = cache.pid ? socket_inodes(cache.pid, cache.inodes, MAX_SOCKETS) : 0;
		cache.stuck = false;
	}
	for (int i = 0; cache.n && !cache.stuck; i++) {
		long queued = queued_bytes(cache.inodes, cache.n);

		if (queued < 0 || queued <= DRAIN_LIMIT_BYTES)
			return;
		if (i == DRAIN_MAX_STEPS) {
			cache.stuck = true;
			return;
		}
		nanosleep(&step, NULL);
	}
}
