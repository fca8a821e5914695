/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base/util.h - small helpers shared by several commands. */
#ifndef FABRICD_UTIL_H
#define FABRICD_UTIL_H

#include <stddef.h>

/* Writes all of buf to fd, retrying short writes and EINTR. 0 or -errno. */
int write_all(int fd, const char *buf, size_t len);

#endif
