/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base/log.h - short log lines to stderr (journald adds time and unit). */
#ifndef FABRICD_LOG_H
#define FABRICD_LOG_H

#include <stdbool.h>

void log_set_verbose(bool verbose);
bool log_is_verbose(void);
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Shown only with --verbose: each kernel change. */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
