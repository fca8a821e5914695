/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/keyfile.h - a node's key files: writing the private key (mode
 * 0600, atomically), and keys kept in memory across the daemon's passes,
 * read again only when their file changed.
 */
#ifndef FABRICD_KEYFILE_H
#define FABRICD_KEYFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "definition/wgkey.h"

/*
 * Writes key in base64 and a newline to path: a temporary file created with
 * mode 0600 next to it, flushed and renamed over path, so the key is never
 * readable by others, not even for a moment, and a crash leaves the old file
 * or the new one. A missing parent directory is created with mode 0700.
 * 0 or -errno with a message in err (which never contains the key).
 */
int keyfile_write(const char *path, const uint8_t key[WGKEY_LEN], char *err, size_t errlen);

/*
 * Key files as last read (private key, preshared keys), by path. A file is
 * read again when what stat says of it changed (device, inode, size, mode,
 * owner, mtime, ctime: a rename, a rewrite, a chmod), and while it changed
 * too recently for its times to tell a second write from the first
 * (racy_ms, as timestamps are coarse). Keys are wiped (sodium_memzero) when
 * replaced, forgotten or freed, and never logged.
 */
struct keyfile_store {
	size_t n;
	struct keyfile_kept *kept;
	long long racy_ms;  /* 0: KEYFILE_RACY_MS; < 0: times always trusted (tests) */
	unsigned int reads; /* files actually read, for tests */
};
#define KEYFILE_RACY_MS 1000

/*
 * The key in path as wgkey_load_file() reads it (same checks, same
 * messages), from memory when the file did not change. ks may be NULL
 * (read it). 0 or -errno with err filled.
 *
 * A file read before that fails now (removed, a mode others can read,
 * garbage) hands out the key read before, so a running daemon keeps
 * repairing everything else (the kernel holds that key anyway):
 * KEYFILE_KEPT the first time, with err saying why; KEYFILE_STILL_KEPT
 * after; KEYFILE_BACK when the file is read again.
 */
enum { KEYFILE_KEPT = 1, KEYFILE_STILL_KEPT, KEYFILE_BACK };
int keyfile_store_load(struct keyfile_store *ks, const char *path, enum wgkey_file kind,
		       uint8_t key[WGKEY_LEN], char *err, size_t errlen);

/*
 * Where a new key waits (KEY.new) until the definition names its public key:
 * join --rotate-key and init/join write it, then rename it over KEY. False
 * when the name does not fit in len.
 */
bool keyfile_pending_path(const char *key_file, char *out, size_t len);

/* Forgets (wipes) the keys not asked for since the last sweep: peers that left. */
void keyfile_store_sweep(struct keyfile_store *ks);
/* Wipes and frees every key; the store can be used again. NULL-safe. */
void keyfile_store_free(struct keyfile_store *ks);

#endif
