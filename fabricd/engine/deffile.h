/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/deffile.h - a definition file edited by several nodes: locked,
 * read, and replaced atomically (temporary file, fsync, rename). Used by
 * init, join, leave, zone, vnet and set-transport, whose file usually
 * lives on a shared directory (it waits for other editors: engine, not
 * definition/, which does no waiting or network I/O).
 */
#ifndef FABRICD_DEFFILE_H
#define FABRICD_DEFFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct deffile {
	char path[PATH_MAX];	  /* the definition, symlinks resolved */
	char lock_path[PATH_MAX]; /* "<path>.lock" */
	int lock_fd;
	bool exists;
	char *text; /* its content (NUL-terminated) when it exists */
	size_t len;
	struct stat st;
};

/*
 * Takes the definition's lock (waits up to wait_s seconds for other editors;
 * command names this edit to them), then reads it. A missing file is not an
 * error here (exists = false: init creates it). 0 or -errno with a message
 * in err.
 */
int deffile_open_locked(const char *path, unsigned int wait_s, const char *command,
			struct deffile *f, char *err, size_t errlen);

/* Exists but empty or white space only: made ahead for its owner and mode (init fills it). */
bool deffile_blank(const struct deffile *f);

/*
 * Replaces the file with text: same owner and mode (0644 for a new file),
 * written to a temporary file next to it, flushed and renamed over it.
 * -EAGAIN (nothing written) when the file's content changed since it was
 * read: an editor that did not take the lock; read again and redo the edit.
 */
int deffile_replace(struct deffile *f, const char *text, size_t len, char *err, size_t errlen);

/* Reads the file again (after -EAGAIN); 0 or -errno with a message in err. */
int deffile_reread(struct deffile *f, char *err, size_t errlen);

/* Releases the lock and the text; NULL-safe fields. */
void deffile_close(struct deffile *f);

#endif
