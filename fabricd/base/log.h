/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base/log.h - short log lines to stderr (journald adds time and unit). */
#ifndef FABRICD_LOG_H
#define FABRICD_LOG_H

#include <stdbool.h>
#include <stdio.h>

void log_set_verbose(bool verbose);
bool log_is_verbose(void);
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Until log_capture_end(), log lines go to a buffer instead of stderr, so
 * that the daemon can print a failure that repeats only once. 0, or -1 when
 * already capturing or out of memory (lines then go to stderr as usual).
 */
int log_capture_begin(void);
/*
 * The calling thread's lines go to stderr from now on, never into a capture:
 * a thread of its own whose lines belong to no pass (the probe's). A thread
 * that works for the capturing one (a pass's helper) does not call it.
 */
void log_thread_uncaptured(void);
/* The lines logged since log_capture_begin() (the caller frees them), or NULL. */
char *log_capture_end(void);
/* Where log lines go now (stderr, or the capture): for printing a diag with them. */
FILE *log_stream(void);
/* Shown only with --verbose: each kernel change. */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
