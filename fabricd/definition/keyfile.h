/* SPDX-License-Identifier: GPL-2.0-or-later */
/* definition/keyfile.h - writing a node's private key file (mode 0600, atomically). */
#ifndef FABRICD_KEYFILE_H
#define FABRICD_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "definition/wgkey.h"

/*
 * Writes key in base64 and a newline to path: a temporary file created with
 * mode 0600 next to it, flushed and renamed over path, so the key is never
 * readable by others, not even for a moment, and a crash leaves the old file
 * or the new one. A missing parent directory is created with mode 0700.
 * 0 or -errno with a message in err (which never contains the key).
 */
int keyfile_write(const char *path, const uint8_t key[WGKEY_LEN], char *err, size_t errlen);

#endif
