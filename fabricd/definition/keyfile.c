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
	char line[WGKEY_B64_LEN + 1];
	int ret = make_parent(path);

	if (ret < 0) {
		snprintf(err, errlen,
			 "%s: cannot create its directory: %s; give another --key-file", path,
			 strerror(-ret));
		return ret;
	}
	wgkey_to_base64(line, key);
	line[WGKEY_B64_LEN - 1] = '\n';
	/* created 0600 before the key is written: never in a file others could open */
	ret = write_file_atomic(path, line, WGKEY_B64_LEN, 0600, false);
	sodium_memzero(line, sizeof(line));
	if (ret < 0)
		snprintf(err, errlen,
			 "%s: cannot write the key: %s; nothing was changed; give another "
			 "--key-file",
			 path, strerror(-ret));
	return ret;
}
