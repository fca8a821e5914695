// SPDX-License-Identifier: GPL-2.0-or-later
/* base/log.c - short log lines to stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"

static bool verbose_enabled;
static FILE *capture; /* while set, lines go here instead of stderr */
static char *capture_buf;
static size_t capture_len;
/*
 * A thread whose lines belong to no pass (the probe's): they go to stderr
 * while the daemon's pass captures its own, never into its buffer, where
 * they came late, went with a pass's text held back, or met its fclose().
 */
static _Thread_local bool uncaptured;

void log_set_verbose(bool verbose)
{
	verbose_enabled = verbose;
}

bool log_is_verbose(void)
{
	return verbose_enabled;
}

void log_thread_uncaptured(void)
{
	uncaptured = true;
}

FILE *log_stream(void)
{
	if (uncaptured)
		return stderr; /* and capture, another thread's, is not read */
	return capture ? capture : stderr;
}

/*
 * One line, one write: stderr is unbuffered, and a reader of the log (a test,
 * an operator's tail -f) must never see a line without its end.
 */
static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	FILE *f = log_stream();
	char line[512], *text;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n >= (int)sizeof(line) && (text = malloc((size_t)n + 1)))
		vsnprintf(text, (size_t)n + 1, fmt, again);
	else
		text = line; /* it fits, or memory ran out: then cut at 511 bytes */
	va_end(again);
	fprintf(f, "%s%s\n", prefix, text);
	if (text != line)
		free(text);
}

int log_capture_begin(void)
{
	if (capture)
		return -1;
	capture = open_memstream(&capture_buf, &capture_len);
	return capture ? 0 : -1;
}

char *log_capture_end(void)
{
	char *text;

	if (!capture)
		return NULL;
	fclose(capture);
	capture = NULL;
	text = capture_buf;
	capture_buf = NULL;
	return text;
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose_enabled)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}
