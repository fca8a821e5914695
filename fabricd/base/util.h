/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base/util.h - small helpers shared by several commands. */
#ifndef FABRICD_UTIL_H
#define FABRICD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes all of buf to fd, retrying short writes and EINTR. 0 or -errno. */
int write_all(int fd, const char *buf, size_t len);

/*
 * Replaces path with data in one rename, so a reader sees the old file or the
 * new one, never part of one: a temporary file beside it (O_EXCL, mode set
 * before any byte is written, so a secret is never readable by others),
 * fsync, rename, fsync of the directory. With keep_owner the mode and owner of the file it replaces
 * are kept (mode is used when there is none). A symlink to a regular file
 * stays, its target is replaced, if root or this user made it (and every
 * link it leads through): a link another user owns is refused with -EPERM
 * (link_of_another_user says so); anything else that is not a regular file
 * (a device such as /dev/null, a FIFO, a dangling link) is never replaced:
 * -EISDIR for a directory, -EINVAL for the rest. 0 or -errno; the temporary
 * file never stays behind. The path is resolved by resolve_trusted, and the
 * file written in the directory it found: no link swapped in on the way
 * after the check is followed.
 */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, bool keep_owner);
/*
 * A secret (a private or preshared key) into path as write_file_atomic does,
 * mode 0600 whatever the umask, but never through a symbolic link: one
 * planted at path, where others may write, would choose which file of the
 * host gets the key (and replace it). -ELOOP for a link at path, -EISDIR for
 * a directory, -EINVAL for any other file that is not a regular one; a link
 * made after the check is replaced, not followed. 0 or -errno.
 */
int write_secret_file(const char *path, const void *data, size_t len);
/*
 * write_file_atomic of the entry name in the directory dirfd (opened by the
 * caller, so that no one can put a link to another directory in its place
 * meanwhile): never through a link (-ELOOP for one at name). 0 or -errno.
 */
int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
			 bool keep_owner);
/*
 * path resolved as the kernel resolves it, but one component at a time from
 * directory descriptors (O_PATH), so that nothing on the way can be swapped
 * between a check and its use, following only the symbolic links that root
 * or this user own (a link's owner and target are read from one descriptor of
 * the link itself). A link another user made, in a directory they may write
 * such as FRR's /etc/frr, would choose which file of root's is read or
 * replaced: -EPERM. Into *dirfd the directory of the last component, into
 * name that component (not a link when checked); 0 when it is there or not
 * yet, 1 when it is not and a link named it (dangling; *dirfd is open then
 * too), -EISDIR when path names a directory, -ENOTDIR, -ELOOP, -errno.
 */
int resolve_trusted(const char *path, int *dirfd, char name[NAME_MAX + 1]);
/*
 * open(path, flags) through resolve_trusted: never through another user's
 * link (-EPERM). The descriptor (O_CLOEXEC) or -errno (-ENOENT for none).
 */
int open_trusted(const char *path, int flags);
/*
 * Whether path is a symbolic link (or leads through one) that belongs to
 * neither root nor this user, which write_file_atomic refuses to write
 * through: for its callers' messages.
 */
bool link_of_another_user(const char *path);
#define FOREIGN_LINK_HINT                                                                          \
	"it is a symbolic link of another user's (or leads through one): fabricd writes only "     \
	"through links root made, never through one that user may have planted to choose "         \
	"which file of root's is replaced; remove the link, or make it anew as root"
/* The temporary file beside path is path TEMP_MARK pid. */
#define TEMP_MARK ".fabricd-tmp."
/*
 * Removes from dir the temporary files of write_file_atomic whose writer is
 * dead (killed between open and rename): the number removed, or -errno when
 * dir cannot be read. Only for a directory of this host (the pid is ours).
 */
int remove_dead_temps(const char *dir);
/*
 * Writes a file's content into fd (left open): 0 or -errno. For content that
 * is made while it is written (a JSON dump through stdio), so that no copy of
 * it all is ever in memory at once.
 */
typedef int (*file_filler)(int fd, const void *ctx);
/* write_file_atomic with the content from fill(fd, ctx). */
int write_file_atomic_fill(const char *path, mode_t mode, bool keep_owner, file_filler fill,
			   const void *ctx);
/*
 * Fills fd, a temporary file just made, and closes it: the owner of *owner
 * first (NULL: as made; fchown may clear set-id bits that the mode then
 * restores), mode, data, fsync. A file system that decides modes itself
 * (Proxmox's pmxcfs) answers EPERM to both: the file keeps what it gives.
 * 0 or -errno; fd is closed either way.
 */
struct stat;
int write_temp_fd(int fd, const struct stat *owner, mode_t mode, const void *data, size_t len);
/*
 * Opens (making it if need be) a lock file for flock(), readable and
 * writable by its owner alone: flock needs no more than an open file, so a
 * lock file others may read is one any local user can hold, stopping every
 * writer that waits for it. A lock file of this user's with a wider mode
 * (an older fabricd made them 0644) is narrowed to 0600. One that belongs to
 * another user than root and this one (made in advance in a directory that
 * user may write) is refused with -EPERM: its owner may open it, and hold it,
 * at will. The fd (O_CLOEXEC, never through a symbolic link) or -errno with
 * why filled (what went wrong and, for another user's file, what to do).
 */
int open_lock_file(const char *path, char *why, size_t whylen);
/* Writes value to a kernel setting such as a /proc/sys file, in one write. 0 or -errno. */
int write_proc(const char *path, const char *value);
/* fsync of path's directory: a rename into it survives a crash (best effort). */
void fsync_parent(const char *path);
/*
 * An output the user names (-o FILE): a device, FIFO or socket (/dev/stdout,
 * /dev/null) is written as it is; a regular file or a new one as
 * write_file_atomic does. 0 or -errno.
 */
int write_output(const char *path, const void *data, size_t len, mode_t mode);

/*
 * This host's node name: its host name up to the first dot, in lower case
 * ("PVE1.example.org" is node "pve1"; host names ignore case, fabricd's
 * names are lower case). buf, or NULL when the host name cannot be read.
 */
const char *host_node_name(char *buf, size_t len);
/* This process's network namespace's inode (0 when /proc cannot tell): files kept per node. */
unsigned long long netns_inode(void);

/* FNV-1a, 64 bits: fnv1a(FNV1A_INIT, data, len), chained for more data. A stable
 * digest for change detection, not a security measure. */
#define FNV1A_INIT 0xcbf29ce484222325ULL
uint64_t fnv1a(uint64_t h, const void *data, size_t len);

/*
 * The power of two >= n (1 for 0): the capacity of a table that doubles as
 * it is appended to, whoever changed its count since (kinds/link.c,
 * kinds/fdb_table.c, engine/view.c).
 */
size_t capacity_for(size_t n);

/* The first of v[0, n) (sorted ascending) not below key, or n: a bisection. */
size_t u64_lower_bound(const uint64_t *v, size_t n, uint64_t key);

/* CLOCK_MONOTONIC in milliseconds, with the fraction: for timing a pass's parts. */
double clock_mono_ms(void);
/* CLOCK_MONOTONIC in whole milliseconds (deadlines, intervals). */
long long monotonic_ms(void);

#endif
