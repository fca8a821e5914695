// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/deffile.c - lock, read and atomically replace a definition that
 * several nodes edit.
 *
 * The lock: flock(2) on "<definition>.lock", a file next to the definition
 * that is never renamed or deleted (locking the definition itself would not
 * work: every edit replaces it by rename, so each editor would lock another
 * inode). flock rather than compare-and-swap on the content, because a
 * check followed by rename(2) is not atomic: two editors can both find the
 * content unchanged and the second rename silently drops the first one's
 * node. flock serialises editors on one host and on NFS (Linux carries
 * flock on NFS as a POSIX lock, which the server enforces for every
 * client). As a second line, for file systems whose locks stay local to a
 * host, deffile_replace() compares the content once more before it renames
 * and reports -EAGAIN when someone else changed it, and the caller redoes
 * its edit on the new content.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/deffile.h"

#define DEF_MAX (16 << 20) /* far above any cluster definition */

/* The whole of fd; *text NUL-terminated. 0 or -errno. */
static int read_fd(int fd, char **text, size_t *len, struct stat *st)
{
	size_t used = 0, cap;
	char *buf;

	if (fstat(fd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
	if (st->st_size > DEF_MAX)
		return -EFBIG;
	cap = (size_t)st->st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + used, cap - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used == cap - 1) {
			/* it grew while being read: keep reading, within the limit */
			char *more = cap > DEF_MAX ? NULL : realloc(buf, cap * 2);

			if (!more) {
				free(buf);
				return cap > DEF_MAX ? -EFBIG : -ENOMEM;
			}
			buf = more;
			cap *= 2;
		}
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	return 0;
}

bool deffile_blank(const struct deffile *f)
{
	if (!f->exists)
		return false;
	for (size_t i = 0; i < f->len; i++)
		if (!isspace((unsigned char)f->text[i]))
			return false;
	return true;
}

/* Reads path into f (exists = false when there is none). 0 or -errno. */
static int load(struct deffile *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	int ret;

	free(f->text);
	f->text = NULL;
	f->len = 0;
	f->exists = false;
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = read_fd(fd, &f->text, &f->len, &f->st);
	close(fd);
	if (ret == 0)
		f->exists = true;
	return ret;
}

/*
 * Where a link that points to nothing yet would have its file (a definition
 * on a shared directory, made by init): its target, relative to the link's
 * directory. 1 with the target in out, 0 when path is no link, or -errno.
 */
static int link_target(const char *path, char *out, size_t len)
{
	char target[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n < 0)
		return errno == EINVAL || errno == ENOENT ? 0 : -errno;
	target[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", path);
	if ((size_t)snprintf(out, len, "%s%s%s", target[0] == '/' ? "" : dirname(dir),
			     target[0] == '/' ? "" : "/", target) >= len)
		return -ENAMETOOLONG;
	return 1;
}

/*
 * The definition's absolute path with its symlinks resolved, also one to a
 * file that does not exist yet (replacing the link would take the
 * definition off the shared directory it points to).
 */
static int resolve(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX], followed[PATH_MAX];
	int ret;

	if (realpath(path, real)) {
		snprintf(out, len, "%s", real);
		return 0;
	}
	if (errno != ENOENT)
		return -errno;
	/* as the kernel follows links: at most 40 (ELOOP beyond) */
	for (int hops = 0; (ret = link_target(path, followed, sizeof(followed))) > 0; hops++) {
		if (hops == 40)
			return -ELOOP;
		snprintf(real, sizeof(real), "%s", followed);
		path = real;
	}
	if (ret < 0)
		return ret;
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	if (!realpath(dirname(dir), real))
		return -errno;
	/* "/" and "x" make "/x", not "//x" */
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", basename(base)) >=
	    len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Who holds the lock, as its holder wrote it: "host H, pid P, command"
 * (empty when not said). The line outlives its writer: one of this host
 * whose process is gone names nobody (a holder that writes none, flock(1)
 * say, would be named as it).
 */
static void read_holder(int fd, char *buf, size_t len)
{
	char host[64] = "", theirs[64];
	ssize_t n = pread(fd, buf, len - 1, 0);
	long pid;

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	gethostname(host, sizeof(host) - 1);
	if (sscanf(buf, "host %63[^,], pid %ld,", theirs, &pid) == 2 && !strcmp(theirs, host) &&
	    kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		buf[0] = '\0';
}

/* Says who edits: an editor that waits names the one it waits for. */
static void write_holder(int fd, const char *command)
{
	char host[64] = "", line[160];
	int n;

	gethostname(host, sizeof(host) - 1);
	n = snprintf(line, sizeof(line), "host %s, pid %ld, %s\n", host, (long)getpid(), command);
	/* only a name for messages: an editor that cannot write it still edits */
	if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) == n)
		return;
}

/*
 * An editor writes its holder line just after its flock: a waiter that
 * found none yet looks again for this long before saying it waits.
 */
#define HOLDER_LINE_MS 500

/*
 * flock, waiting up to wait_s seconds for other editors (saying once that
 * it waits, and for whom). 0 or -errno with a message in err.
 */
static int take_lock(struct deffile *f, unsigned int wait_s, const char *command, char *err,
		     size_t errlen)
{
	double started = clock_mono_ms(), deadline = started + 1000.0 * wait_s;
	struct timespec pause = {.tv_nsec = 50 * 1000000L};
	char holder[160];
	bool told = false;

	while (flock(f->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		if (e != EWOULDBLOCK && e != EINTR) {
			snprintf(err, errlen,
				 "%s: cannot lock it: %s; nothing was changed (does this file "
				 "system support locks?)",
				 f->lock_path, strerror(e));
			return -e;
		}
		read_holder(f->lock_fd, holder, sizeof(holder));
		if (clock_mono_ms() >= deadline) {
			snprintf(err, errlen,
				 "%s: another edit of the definition (%s) has held its lock for "
				 "more than %u s; nothing was changed: try again when it is done "
				 "(--lock-wait SECONDS waits longer), or end it (lock %s)",
				 f->path, holder[0] ? holder : "holder not recorded", wait_s,
				 f->lock_path);
			return -EWOULDBLOCK;
		}
		/* "holder not recorded" only when it stays so: between a flock and its line */
		if (!told && (holder[0] || clock_mono_ms() - started >= HOLDER_LINE_MS)) {
			log_info("%s: waiting up to %u s for another edit of it (%s)", f->path,
				 wait_s, holder[0] ? holder : "holder not recorded");
			told = true;
		}
		nanosleep(&pause, NULL);
	}
	write_holder(f->lock_fd, command);
	return 0;
}

#define GIVE_FILE "give the definition file with -c FILE (readable by this user)"

int deffile_open_locked(const char *path, unsigned int wait_s, const char *command,
			struct deffile *f, char *err, size_t errlen)
{
	char why[PATH_MAX + 256];
	struct stat st;
	int ret;

	memset(f, 0, sizeof(*f));
	f->lock_fd = -1;
	ret = resolve(path, f->path, sizeof(f->path));
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s; %s", path, strerror(-ret),
			 ret == -ELOOP ? "its links lead back to themselves (or through more than "
					 "40): give the definition's own path with -c"
				       : "give a definition in an existing directory with -c");
		return ret;
	}
	/* before its lock file is made next to it (DIR.lock) */
	if (stat(f->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: cannot read it: %s; nothing was changed: %s", path,
			 strerror(EISDIR), GIVE_FILE);
		return -EISDIR;
	}
	if ((size_t)snprintf(f->lock_path, sizeof(f->lock_path), "%s.lock", f->path) >=
	    sizeof(f->lock_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	f->lock_fd = open_lock_file(f->lock_path, why, sizeof(why));
	if (f->lock_fd < 0) {
		ret = f->lock_fd;
		snprintf(err, errlen,
			 "%s: cannot open the definition's lock file: %s; nothing was changed "
			 "(%s)",
			 f->lock_path, why,
			 ret == -EROFS	 ? "an edit writes next to the definition: edit it where "
					   "its directory is writable"
			 : ret == -EPERM ? "keep the definition in a directory others may not "
					   "write"
					 : "run as a user who may write to that directory");
		return ret;
	}
	ret = take_lock(f, wait_s, command, err, errlen);
	if (ret < 0) {
		deffile_close(f);
		return ret;
	}
	return deffile_reread(f, err, errlen);
}

int deffile_reread(struct deffile *f, char *err, size_t errlen)
{
	int ret = load(f);

	if (ret < 0)
		snprintf(err, errlen, "%s: cannot read it: %s; nothing was changed: %s", f->path,
			 strerror(-ret),
			 ret == -EACCES || ret == -EISDIR
			     ? GIVE_FILE
			     : "check the file system it is on (dmesg), then try again");
	return ret;
}

/* Whether the file still holds what f->text has (or still does not exist). */
static int unchanged(const struct deffile *f)
{
	struct deffile now = {.lock_fd = -1};
	int ret;

	memcpy(now.path, f->path, sizeof(now.path));
	ret = load(&now);
	if (ret == 0)
		ret = now.exists == f->exists &&
		      (!f->exists || (now.len == f->len && !memcmp(now.text, f->text, f->len)));
	free(now.text);
	return ret;
}

static int write_temp(const struct deffile *f, const char *tmp, const char *text, size_t len)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	return write_temp_fd(fd, f->exists ? &f->st : NULL,
			     f->exists ? (f->st.st_mode & 07777) : 0644, text, len);
}

int deffile_replace(struct deffile *f, const char *text, size_t len, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 96], host[64] = "";
	int ret;

	/* the host name too: editors on other hosts of a shared directory may have our pid */
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, "/")] = '\0';
	snprintf(tmp, sizeof(tmp), "%s.tmp.%s.%d", f->path, host, (int)getpid());
	ret = write_temp(f, tmp, text, len);
	if (ret < 0) {
		snprintf(err, errlen,
			 "%s: cannot write it: %s; nothing was changed: an edit writes a new file "
			 "next to the definition and renames it over the definition; free space or "
			 "allow writing in that directory (its mode, an immutable attribute, a "
			 "read-only mount)",
			 tmp, strerror(-ret));
		unlink(tmp);
		return ret;
	}
	ret = unchanged(f);
	if (ret <= 0) {
		unlink(tmp);
		if (ret < 0) {
			snprintf(err, errlen, "%s: cannot read it again: %s; nothing was changed",
				 f->path, strerror(-ret));
			return ret;
		}
		snprintf(err, errlen, "%s: changed by another editor meanwhile", f->path);
		return -EAGAIN;
	}
	if (rename(tmp, f->path) < 0) {
		ret = -errno;
		snprintf(err, errlen,
			 "%s: cannot replace it: %s; nothing was changed: an edit renames a new "
			 "file over it; allow that (an immutable attribute: `lsattr`; the "
			 "directory's mode; a read-only mount; a file mounted over it)",
			 f->path, strerror(-ret));
		unlink(tmp);
		return ret;
	}
	fsync_parent(f->path); /* the rename itself survives a crash */
	return 0;
}

void deffile_close(struct deffile *f)
{
	if (f->lock_fd >= 0)
		close(f->lock_fd); /* releases the flock */
	f->lock_fd = -1;
	free(f->text);
	f->text = NULL;
}
