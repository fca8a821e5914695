// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_log.c - base/log.c: each line whole, whatever its length (a line of
 * 511 bytes and more takes the heap path), its prefix first, in one write to
 * stderr, and only with --verbose the debug lines.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "unit.h"

static char *logged(void (*fn)(const char *, ...), const char *msg)
{
	log_capture_begin();
	fn("%s", msg);
	return log_capture_end();
}

static void test_lengths(void)
{
	static const size_t lengths[] = {0, 1, 510, 511, 512, 513, 4096, 70000};
	static const struct {
		void (*fn)(const char *, ...);
		const char *prefix;
	} levels[] = {{log_error, "error: "}, {log_warn, "warning: "}, {log_info, ""}};

	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		char *msg = malloc(lengths[i] + 1), *want;

		memset(msg, 'a' + (int)(i % 26), lengths[i]);
		msg[lengths[i]] = '\0';
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			char *got = logged(levels[l].fn, msg);

			want = malloc(strlen(levels[l].prefix) + lengths[i] + 2);
			sprintf(want, "%s%s\n", levels[l].prefix, msg);
			CHECK_STR(got ? got : "", want, "length %zu, prefix \"%s\"", lengths[i],
				  levels[l].prefix);
			free(want);
			free(got);
		}
		free(msg);
	}
}

static void test_debug_only_when_verbose(void)
{
	char *got = logged(log_debug, "hidden");

	CHECK_STR(got ? got : "", "", "debug without --verbose");
	free(got);
	log_set_verbose(true);
	got = logged(log_debug, "shown");
	CHECK_STR(got ? got : "", "debug: shown\n", "debug with --verbose");
	free(got);
	log_set_verbose(false);
}

static void test_capture_does_not_nest(void)
{
	char *got;

	CHECK_INT(log_capture_begin(), 0, "first capture");
	CHECK_INT(log_capture_begin(), -1, "a second capture is refused");
	log_info("once");
	got = log_capture_end();
	CHECK_STR(got ? got : "", "once\n", "the first capture has the line");
	free(got);
	CHECK(log_capture_end() == NULL, "nothing to end");
}

/*
 * stderr as one end of a SOCK_SEQPACKET pair: every write is one record, so
 * the first record read is what a reader of the log could see first.
 */
static void test_one_line_one_write(void)
{
	static const size_t lengths[] = {20, 600};
	char buf[1024];
	int sv[2], saved;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
		CHECK(0, "socketpair: %m");
		return;
	}
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		char msg[700];
		ssize_t n;

		memset(msg, 'x', lengths[i]);
		msg[lengths[i]] = '\0';
		fflush(stderr);
		saved = dup(STDERR_FILENO);
		dup2(sv[0], STDERR_FILENO);
		log_error("%s", msg);
		dup2(saved, STDERR_FILENO);
		close(saved);
		n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT);
		CHECK_INT(n, (ssize_t)(strlen("error: ") + lengths[i] + 1),
			  "the first write of a line of %zu bytes is the whole line", lengths[i]);
		while (recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
	}
	close(sv[0]);
	close(sv[1]);
}

static void *log_from_thread(void *uncaptured)
{
	if (uncaptured)
		log_thread_uncaptured();
	log_warn("%s", uncaptured ? "probe" : "helper");
	return NULL;
}

/*
 * The daemon captures every pass's lines while its probe thread warns of the
 * data path: the probe's line went into the pass's buffer (late, dropped
 * with a pass's text held back, or written as the pass closed it). A thread
 * that says so logs to stderr; another (a pass's helper) still into it.
 */
static void test_a_thread_of_its_own_is_not_captured(void)
{
	char buf[256] = "";
	int sv[2], saved;
	pthread_t t;
	char *got;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
		CHECK(0, "socketpair: %m");
		return;
	}
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(sv[0], STDERR_FILENO);
	CHECK_INT(log_capture_begin(), 0, "capture");
	for (int uncaptured = 1; uncaptured >= 0; uncaptured--) {
		CHECK_INT(pthread_create(&t, NULL, log_from_thread, uncaptured ? &t : NULL), 0,
			  "thread");
		pthread_join(t, NULL);
	}
	got = log_capture_end();
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "warning: probe\n", "the probe thread's line went to stderr at once");
	CHECK_STR(got ? got : "", "warning: helper\n", "a helper's line is in the capture");
	free(got);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	test_a_thread_of_its_own_is_not_captured();
	test_lengths();
	test_one_line_one_write();
	test_debug_only_when_verbose();
	test_capture_does_not_nest();
	return unit_summary("test_log");
}
