// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/retry.c - a valid definition that failed here, tried again with back-off (retry.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "daemon/retry.h"
#include "daemon/watch.h"

static long long backoff_ms(unsigned int failures)
{
	long long delay = DEF_RETRY_MIN_MS;

	for (unsigned int i = 1; i < failures && delay < DEF_RETRY_MAX_MS; i++)
		delay *= 2;
	return delay < DEF_RETRY_MAX_MS ? delay : DEF_RETRY_MAX_MS;
}

/* The first "error: " line of log, without the prefix. */
static void first_error(const char *log, char *out, size_t len)
{
	const char *p = log ? strstr(log, "error: ") : NULL;

	out[0] = '\0';
	if (p) {
		p += strlen("error: ");
		snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
	}
}

void def_retry_failed(struct def_retry *r, struct cluster *c, const char *log, const char *path,
		      long long now_ms)
{
	uint64_t h = digest(DIGEST_INIT, log ? log : "", log ? strlen(log) : 0);
	long long delay;

	cluster_free(r->cluster);
	r->cluster = c;
	r->failures++;
	delay = backoff_ms(r->failures);
	r->due_ms = now_ms + delay;
	first_error(log, r->first_error, sizeof(r->first_error));
	if (h == r->reported) {
		log_debug("%s: still cannot be applied (attempt %u); trying again in %lld s", path,
			  r->failures, delay / 1000);
		return;
	}
	r->reported = h;
	if (log)
		fputs(log, log_stream());
	/* nothing went wrong: it waits for something under way (a key rotation's second step) */
	if (log && !r->first_error[0]) {
		log_info("%s: not applied on this node yet (see above); the last good definition "
			 "stays in force meanwhile; trying again in %lld s, and at once when the "
			 "private key file changes",
			 path, delay / 1000);
		return;
	}
	log_error("%s: valid, but cannot be applied on this node yet (see above); the last good "
		  "definition stays in force; trying again in %lld s, doubling to %d s, and at "
		  "once when the kernel changes",
		  path, delay / 1000, DEF_RETRY_MAX_MS / 1000);
}

void def_retry_again(struct def_retry *r, struct cluster *c, uint64_t key_sig)
{
	cluster_free(r->cluster);
	r->cluster = c;
	r->key_sig = key_sig; /* the file differs now: the next pass takes it */
	r->due_ms = 0;
}

struct cluster *def_retry_take(struct def_retry *r, bool kernel_changed, long long now_ms)
{
	struct cluster *c = r->cluster;

	if (!c || (!kernel_changed && now_ms < r->due_ms))
		return NULL;
	r->cluster = NULL;
	return c;
}

void def_retry_succeeded(struct def_retry *r, const char *path)
{
	if (r->failures)
		log_info("%s: applied after %u failed attempt%s", path, r->failures,
			 r->failures == 1 ? "" : "s");
	def_retry_drop(r);
}

void def_retry_drop(struct def_retry *r)
{
	cluster_free(r->cluster);
	memset(r, 0, sizeof(*r));
}

long long def_retry_delay(const struct def_retry *r, long long now_ms)
{
	if (!r->cluster)
		return -1;
	return r->due_ms > now_ms ? r->due_ms - now_ms : 0;
}

uint64_t def_retry_key_sig(const char *key_file)
{
	struct stat st;
	uint64_t h;

	if (!key_file || stat(key_file, &st) < 0)
		return 0;
	h = digest(DIGEST_INIT, &st.st_ino, sizeof(st.st_ino));
	h = digest(h, &st.st_mtim, sizeof(st.st_mtim));
	return digest(h, &st.st_size, sizeof(st.st_size));
}

bool def_retry_key_changed(const struct def_retry *r, const char *key_file)
{
	return r->cluster && def_retry_key_sig(key_file) != r->key_sig;
}
