// SPDX-License-Identifier: GPL-2.0-or-later
/* base/log.c - short log lines to stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

static bool verbose_enabled;

void log_set_verbose(bool verbose)
{
	verbose_enabled = verbose;
}

bool log_is_verbose(void)
{
	return verbose_enabled;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
