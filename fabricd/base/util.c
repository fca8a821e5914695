// SPDX-License-Identifier: GPL-2.0-or-later
/* base/util.c - small helpers shared by several commands. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The next component of *rest (moved past it) into comp, "" at the end.
 * -ENAMETOOLONG for one longer than a name.
 */
static int next_component(const char **rest, char comp[NAME_MAX + 1])
{
	size_t n;

	while (**rest == '/')
		(*rest)++;
	n = strcspn(*rest, "/");
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(comp, *rest, n);
	comp[n] = '\0';
	*rest += n;
	return 0;
}

/* A link of root's or of this user's (who could write the file anyway) may choose a file. */
static bool owner_trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * A link followed: its owner and target read from one descriptor of the link
 * itself, so the two are of one inode; then what the link names, followed by
 * the rest, into next (from /: *dir reopened at the root).
 */
static int follow_link(int link, int *dir, const char *rest, char next[PATH_MAX])
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstat(link, &st) < 0)
		return -errno;
	if (!owner_trusted(st.st_uid))
		return -EPERM;
	n = readlinkat(link, "", target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (snprintf(next, PATH_MAX, "%s/%s", target, rest) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (target[0] == '/') {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (root < 0)
			return -errno;
		close(*dir);
		*dir = root;
	}
	return 0;
}

int resolve_trusted(const char *path, int *dirfd, char name[NAME_MAX + 1])
{
	char buf[2][PATH_MAX];
	const char *rest = path;
	int dir = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int hops = 0, which = 0, ret = 0;
	bool via_link = false; /* the last component is (part of) a link's target */

	if (dir < 0)
		return -errno;
	for (;;) {
		struct stat st;
		bool last;
		int fd;

		ret = next_component(&rest, name);
		if (ret < 0)
			break;
		last = !rest[strspn(rest, "/")];
		if (!name[0] || (last && (!strcmp(name, ".") || !strcmp(name, "..")))) {
			ret = -EISDIR; /* "/", "dir/.": a directory */
			break;
		}
		fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = errno != ENOENT ? -errno : via_link ? 1 : last ? 0 : -ENOENT;
			break;
		}
		if (fstat(fd, &st) < 0) {
			ret = -errno;
		} else if (S_ISLNK(st.st_mode)) {
			ret = ++hops > 40 ? -ELOOP : follow_link(fd, &dir, rest, buf[!which]);
			rest = buf[which = !which];
			via_link |= last;
		} else if (last) {
			ret = S_ISDIR(st.st_mode) ? -EISDIR : 0;
		} else if (!S_ISDIR(st.st_mode)) {
			ret = -ENOTDIR;
		} else {
			close(dir);
			dir = fd;
			continue;
		}
		close(fd);
		if (ret < 0 || (last && !S_ISLNK(st.st_mode)))
			break;
	}
	if (ret < 0)
		close(dir);
	else
		*dirfd = dir;
	return ret;
}

bool link_of_another_user(const char *path)
{
	char name[NAME_MAX + 1];
	int dir, ret = resolve_trusted(path, &dir, name);

	if (ret >= 0)
		close(dir);
	return ret == -EPERM;
}

int open_trusted(const char *path, int flags)
{
	char name[NAME_MAX + 1];
	int dir, fd, ret = resolve_trusted(path, &dir, name);

	if (ret < 0)
		return ret;
	fd = openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC);
	ret = fd < 0 ? -errno : fd;
	close(dir);
	return ret;
}

int write_output(const char *path, const void *data, size_t len, mode_t mode)
{
	struct stat st;
	int fd, ret;

	if (stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return write_file_atomic(path, data, len, mode, false);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, data, len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

/* The owner, mode, content (fill), fsync and close of a temporary file just made. */
static int fill_temp_fd(int fd, const struct stat *owner, mode_t mode, file_filler fill,
			const void *ctx)
{
	int ret = 0;

	/*
	 * Proxmox's pmxcfs (/etc/pve) allows only 0640 (0600 under priv/) and
	 * answers EPERM to other modes, as it does to fchown.
	 */
	if (owner && fchown(fd, owner->st_uid, owner->st_gid) < 0 && errno != EPERM)
		ret = -errno;
	if (!ret && fchmod(fd, mode) < 0 && errno != EPERM)
		ret = -errno;
	if (!ret)
		ret = fill(fd, ctx);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

struct bytes {
	const void *data;
	size_t len;
};

static int fill_bytes(int fd, const void *ctx)
{
	const struct bytes *b = ctx;

	return write_all(fd, b->data, b->len);
}

int write_temp_fd(int fd, const struct stat *owner, mode_t mode, const void *data, size_t len)
{
	struct bytes b = {data, len};

	return fill_temp_fd(fd, owner, mode, fill_bytes, &b);
}

int write_proc(const char *path, const char *value)
{
	size_t len = strlen(value);
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n != (ssize_t)len)
		ret = n < 0 ? -errno : -EIO;
	close(fd);
	return ret;
}

/*
 * The file at path itself (never what a link there names: rename(2) replaces
 * the entry) replaced by a temporary file beside it; owner NULL: as made.
 */
static int replace_entry(const char *path, mode_t mode, const struct stat *owner, file_filler fill,
			 const void *ctx)
{
	char tmp[PATH_MAX];
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s" TEMP_MARK "%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp); /* left by a process of this pid that was killed */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 0600);
	if (fd < 0)
		return -errno;
	/* made with at most 0600 above; the mode whatever the umask was */
	ret = fill_temp_fd(fd, owner, mode, fill, ctx);
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	else
		fsync_parent(path);
	return ret;
}

/* 0 for a regular file; a link, a directory or anything else is not written over. */
static int regular_or_refused(mode_t mode)
{
	return S_ISLNK(mode) ? -ELOOP : S_ISDIR(mode) ? -EISDIR : !S_ISREG(mode) ? -EINVAL : 0;
}

/* fsync of a directory known by a descriptor that may be O_PATH (best effort) */
static void fsync_dirfd(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static int write_at_fill(int dirfd, const char *name, mode_t mode, bool keep_owner,
			 file_filler fill, const void *ctx)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
	bool have = false;
	int fd, ret;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if ((ret = regular_or_refused(st.st_mode)) < 0)
			return ret;
		have = keep_owner;
	} else if (errno != ENOENT) {
		return -errno;
	}
	if (snprintf(tmp, sizeof(tmp), "%s" TEMP_MARK "%ld", name, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlinkat(dirfd, tmp, 0); /* left by a process of this pid that was killed */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 0600);
	if (fd < 0)
		return -errno;
	/* made with at most 0600 above; the mode whatever the umask was */
	ret = fill_temp_fd(fd, have ? &st : NULL, have ? st.st_mode & 07777 : mode, fill, ctx);
	if (!ret && renameat(dirfd, tmp, dirfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	else
		fsync_dirfd(dirfd);
	return ret;
}

int write_file_atomic_fill(const char *path, mode_t mode, bool keep_owner, file_filler fill,
			   const void *ctx)
{
	char name[NAME_MAX + 1];
	int dir, ret = resolve_trusted(path, &dir, name);

	if (ret == 1)
		ret = -EINVAL; /* a dangling link: what it names is unknown */
	if (ret < 0)
		return ret;
	ret = write_at_fill(dir, name, mode, keep_owner, fill, ctx);
	close(dir);
	return ret;
}

int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
			 bool keep_owner)
{
	struct bytes b = {data, len};

	return write_at_fill(dirfd, name, mode, keep_owner, fill_bytes, &b);
}

int write_secret_file(const char *path, const void *data, size_t len)
{
	struct bytes b = {data, len};
	struct stat st;
	int ret;

	if (lstat(path, &st) == 0) {
		if ((ret = regular_or_refused(st.st_mode)) < 0)
			return ret;
	} else if (errno != ENOENT) {
		return -errno;
	}
	/* a link planted after lstat is replaced by the rename, never followed */
	return replace_entry(path, 0600, NULL, fill_bytes, &b);
}

/* TEMP_MARK then a pid of digits only: the pid, or 0 when name is not such a temporary file */
static long temp_owner_pid(const char *name)
{
	const char *mark = strstr(name, TEMP_MARK);
	char *end;
	long pid;

	if (!mark || !mark[sizeof(TEMP_MARK) - 1])
		return 0;
	pid = strtol(mark + sizeof(TEMP_MARK) - 1, &end, 10);
	return *end || pid <= 0 ? 0 : pid;
}

int remove_dead_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int removed = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		long pid = temp_owner_pid(e->d_name);

		/* ESRCH only: a live writer's file, or one we may not signal, stays */
		if (pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH &&
		    unlinkat(dirfd(d), e->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, bool keep_owner)
{
	struct bytes b = {data, len};

	return write_file_atomic_fill(path, mode, keep_owner, fill_bytes, &b);
}

void fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	int fd;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

const char *host_node_name(char *buf, size_t len)
{
	if (len < 2 || gethostname(buf, len - 1) < 0)
		return NULL;
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
	for (char *p = buf; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	return buf;
}

unsigned long long netns_inode(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

double clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

long long monotonic_ms(void)
{
	return (long long)clock_mono_ms();
}

size_t capacity_for(size_t n)
{
	size_t c = 1;

	while (c < n)
		c *= 2;
	return c;
}

size_t u64_lower_bound(const uint64_t *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int open_lock_file(const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;
	int ret;

	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s", strerror(-ret));
		goto fail;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		/* made in advance by a user who may write its directory: they can hold it */
		snprintf(why, whylen,
			 "it belongs to uid %u, neither root nor this user (uid %u), who could "
			 "hold it and stop every fabricd that waits for it: remove it (rm %s; "
			 "fabricd makes it again)",
			 (unsigned int)st.st_uid, (unsigned int)geteuid(), path);
		ret = -EPERM;
		goto fail;
	}
	if (st.st_uid == geteuid() && (st.st_mode & 077) && fchmod(fd, 0600) < 0 &&
	    errno != EPERM) {
		ret = -errno;
		snprintf(why, whylen, "%s", strerror(-ret));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return ret;
}
