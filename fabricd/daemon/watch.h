/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch.h - what wakes `fabricd run` up, apart from signals and its
 * timer: changes of the definition file (inotify on its directory, and a
 * stat for file systems without inotify), kernel notifications (rtnetlink
 * multicast) and changes of the WireGuard device, which sends none.
 */
#ifndef FABRICD_DAEMON_WATCH_H
#define FABRICD_DAEMON_WATCH_H

#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/util.h"
#include "engine/view.h"
#include "wireguard/wg.h"

/* The definition file as last read: a difference means read it again. */
struct file_id {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

void file_id_read(const char *path, struct file_id *id);
bool file_id_changed(const struct file_id *a, const struct file_id *b);

/*
 * inotify watches on the directories of a few files (editors and cluster file
 * systems replace files by rename, which a watch on the file would not follow).
 */
#define FILE_WATCH_MAX 2
struct file_watch {
	int fd; /* inotify, -1 when not open */
	size_t n;
	struct watched_file {
		int wd; /* -1 while the directory is not watched */
		char dir[4096];
		char base[256];
	} files[FILE_WATCH_MAX];
};

/* Opens the inotify descriptor and watches path's directory (a warning if it cannot). */
int file_watch_open(struct file_watch *w, const char *path);
/* One more file (after file_watch_open); -E2BIG beyond FILE_WATCH_MAX. */
int file_watch_add(struct file_watch *w, const char *path);
/* Tries again to watch the directories that were lost (a directory went away). */
void file_watch_retry(struct file_watch *w);
enum file_change {
	FILE_UNCHANGED,
	FILE_CHANGED, /* deleted, moved away, or events were lost */
	FILE_WRITTEN, /* last closed after writing, or renamed into place: whole */
	FILE_CREATED, /* last created: a writer may be at work, its close comes */
};
/* Reads every pending event: what the last one for a watched file says (or some were lost). */
enum file_change file_watch_read(struct file_watch *w);
void file_watch_close(struct file_watch *w);

/* A NETLINK_ROUTE socket on the link, neighbour, address and route groups. NULL on error. */
struct mnl_socket *kernel_watch_open(void);
/*
 * A NETLINK_NETFILTER socket on the nftables group: changes of the table
 * `inet fabricd` (the firewall guard). NULL when the kernel has no nftables.
 */
struct mnl_socket *nft_watch_open(void);

enum kernel_event {
	KERNEL_QUIET = 0,
	KERNEL_CHANGED = 1U << 0,  /* something fabricd owns or depends on may have changed */
	KERNEL_OVERFLOW = 1U << 1, /* ENOBUFS: notifications were lost, read everything */
	/*
	 * A MAC entry another agent (FRR's zebra) installed or moved on a VXLAN
	 * device: the route the device cached for its old remote may stay in
	 * use (engine/route_cache.h); not a change of fabricd's.
	 */
	KERNEL_REMOTE_MOVED = 1U << 2,
};

/*
 * Reads every pending notification of kernel_watch_open()'s socket; a mask of
 * enum kernel_event. Each one also marks what it concerns dirty in view
 * (engine/view.h).
 */
unsigned int kernel_watch_read(struct mnl_socket *mon, struct obs_view *view);
/*
 * The same for nft_watch_open()'s socket: KERNEL_CHANGED when the table
 * `inet fabricd` changed or notifications were lost (the guard is marked
 * stale in view, nothing else: a lost one was about a table), else KERNEL_QUIET.
 */
unsigned int nft_watch_read(struct mnl_socket *mon, struct obs_view *view);

/* FNV-1a, 64 bit: digest(DIGEST_INIT, data, len), chained for more data. */
#define DIGEST_INIT FNV1A_INIT
uint64_t digest(uint64_t h, const void *data, size_t len);

/*
 * A digest of the device's keys, port and peers (order-free; counters, handshakes and
 * the endpoints themselves left out: a peer roams, see engine/reconcile.h).
 */
uint64_t wg_signature(const struct wg_device *dev);

#endif
