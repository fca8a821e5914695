// SPDX-License-Identifier: GPL-2.0-or-later
/* base/util.c - small helpers shared by several commands. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
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

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, bool keep_owner)
{
	char tmp[PATH_MAX];
	struct stat st;
	bool have = keep_owner && stat(path, &st) == 0;
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.fabricd-tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (have)
		mode = st.st_mode & 07777;
	unlink(tmp); /* left by a process of this pid that was killed */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 0600);
	if (fd < 0)
		return -errno;
	if (have && fchown(fd, st.st_uid, st.st_gid) < 0)
		ret = -errno;
	if (!ret && fchmod(fd, mode) < 0) /* whatever the umask was */
		ret = -errno;
	if (!ret)
		ret = write_all(fd, data, len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
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
