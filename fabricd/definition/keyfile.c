// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/keyfile.c - a private key file: 0600 from its creation, replaced by rename. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "definition/keyfile.h"

static int make_parent(const char *path)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int keyfile_write(const char *path, const uint8_t key[WGKEY_LEN], char *err, size_t errlen)
{
	char tmp[PATH_MAX + 32], line[WGKEY_B64_LEN + 1];
	int fd, ret = make_parent(path);

	if (ret < 0) {
		snprintf(err, errlen,
			 "%s: cannot create its directory: %s; give another --key-file", path,
			 strerror(-ret));
		return ret;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	/* O_EXCL with 0600: the key is never in a file anyone else could open */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot create it: %s; give another --key-file", tmp,
			 strerror(-ret));
		return ret;
	}
	wgkey_to_base64(line, key);
	line[WGKEY_B64_LEN - 1] = '\n';
	ret = fchmod(fd, 0600) < 0 ? -errno : 0; /* whatever the umask was */
	if (!ret)
		ret = write_all(fd, line, WGKEY_B64_LEN);
	sodium_memzero(line, sizeof(line));
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0) {
		snprintf(err, errlen, "%s: cannot write the key: %s; nothing was changed", path,
			 strerror(-ret));
		unlink(tmp);
	}
	return ret;
}
