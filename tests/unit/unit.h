/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unit.h - a tiny table-driven test helper. Each test binary calls CHECK*()
 * and ends with unit_summary(), which prints "N passed, N failed" and returns
 * the exit status (pytest wraps every binary, see tests/test_unit.py).
 */
#ifndef FABRICD_UNIT_H
#define FABRICD_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			unit_passed++;                                                             \
		} else {                                                                           \
			unit_failed++;                                                             \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_INT(got, want, ...)                                                                  \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		if (g_ == w_) {                                                                    \
			unit_passed++;                                                             \
		} else {                                                                           \
			unit_failed++;                                                             \
			fprintf(stderr, "FAIL %s:%d: %s = %lld, want %lld: ", __FILE__, __LINE__,  \
				#got, g_, w_);                                                     \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_STR(got, want, ...)                                                                  \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (g_ && w_ && !strcmp(g_, w_)) {                                                 \
			unit_passed++;                                                             \
		} else {                                                                           \
			unit_failed++;                                                             \
			fprintf(stderr, "FAIL %s:%d: %s = \"%s\", want \"%s\": ", __FILE__,        \
				__LINE__, #got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");           \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* The exit status that tells the runner (tests/test_unit.py, automake) "skipped". */
#define UNIT_EXIT_SKIP 77

/* This process's resident set (VmRSS) in KiB, -1 when unknown: for tests of memory kept. */
static inline long unit_resident_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

/* Whether ASan or valgrind replaces malloc: resident-memory measures mean nothing then. */
static inline int unit_allocator_is_instrumented(void)
{
	const char *preload = getenv("LD_PRELOAD");

#if defined(__SANITIZE_ADDRESS__)
	(void)preload;
	return 1;
#endif
	return preload && strstr(preload, "vgpreload");
}

static const char *unit_skip_reason;

/* Marks part of the binary as not run, with why; unit_summary() then reports a skip. */
static inline void unit_skip(const char *name, const char *why)
{
	printf("%s: SKIP: %s\n", name, why);
	unit_skip_reason = why;
}

static inline int unit_summary(const char *name)
{
	printf("%s: %d passed, %d failed%s%s\n", name, unit_passed, unit_failed,
	       unit_skip_reason ? ", skipped: " : "", unit_skip_reason ? unit_skip_reason : "");
	if (unit_failed)
		return 1;
	return unit_skip_reason ? UNIT_EXIT_SKIP : 0;
}

#endif
