// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/config_file.c - who may write the definition file: every
 * node's WireGuard peers, their keys and endpoints come from it, so whoever
 * may change it chooses who reads a secure zone's traffic.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definition/config_priv.h"

void config_check_writers(FILE *f, const char *path, struct diag *d)
{
	char dir[PATH_MAX], cwd[PATH_MAX];
	const char *in;
	struct stat st;

	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IWOTH)) {
		diag_warn(d, path,
			  "every user may write it (mode %04o), and so choose this node's "
			  "WireGuard peers, their keys and endpoints (who reads a secure zone's "
			  "traffic): run chmod o-w %s",
			  (unsigned int)(st.st_mode & 07777), path);
		return;
	}
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	/* dirname's answer, not dir: for a name without a slash it is "." and dir stays the name */
	in = dirname(dir);
	if (stat(in, &st) < 0)
		return;
	if (!strcmp(in, ".") && getcwd(cwd, sizeof(cwd)))
		in = cwd;
	/* the sticky bit (/tmp) keeps others from replacing a file they do not own */
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		diag_warn(d, path,
			  "it is in %s, which every user may write (mode %04o): they can put "
			  "another definition in its place, and so choose this node's WireGuard "
			  "peers, their keys and endpoints: run chmod o-w %s",
			  in, (unsigned int)(st.st_mode & 07777), in);
}
