/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base/util.h - small helpers shared by several commands. */
#ifndef FABRICD_UTIL_H
#define FABRICD_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Writes all of buf to fd, retrying short writes and EINTR. 0 or -errno. */
int write_all(int fd, const char *buf, size_t len);

/* FNV-1a, 64 bits: fnv1a(FNV1A_INIT, data, len), chained for more data. A stable
 * digest for change detection, not a security measure. */
#define FNV1A_INIT 0xcbf29ce484222325ULL
uint64_t fnv1a(uint64_t h, const void *data, size_t len);

#endif
