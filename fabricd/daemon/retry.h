/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/retry.h - a valid new definition that could not be applied yet.
 *
 * A definition can be valid and still fail on this node for a while: a
 * wanted name held by someone else's link, a missing route, a netlink
 * error. The daemon keeps it (the last good one stays in force meanwhile)
 * and tries it again with back-off, 1 s doubling to 30 s, and at once when
 * the kernel changes (the cause may just have gone). Each distinct failure
 * is logged once; the status line says it is pending.
 */
#ifndef FABRICD_RETRY_H
#define FABRICD_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "definition/model.h"

#define DEF_RETRY_MIN_MS 1000
#define DEF_RETRY_MAX_MS 30000

struct def_retry {
	struct cluster *cluster; /* NULL: nothing pending */
	unsigned int failures;	 /* attempts failed in a row */
	uint64_t reported;	 /* digest of the failure last logged */
	long long due_ms;	 /* CLOCK_MONOTONIC ms of the next attempt */
	char first_error[160];	 /* for the status line */
	uint64_t key_sig;	 /* the private key file when it failed (key_file_sig) */
};

/*
 * c (taken over) failed; log is what the attempt logged. Logs it when it
 * differs from the last failure, and sets the next attempt.
 */
void def_retry_failed(struct def_retry *r, struct cluster *c, const char *log, const char *path,
		      long long now_ms);
/*
 * c (taken over) is tried again at once, nothing logged: the private key
 * file changed while it was tried (key_sig: the file as the attempt began).
 */
void def_retry_again(struct def_retry *r, struct cluster *c, uint64_t key_sig);
/* The pending definition when due (or when kernel_changed), handed back to the caller; else NULL.
 */
struct cluster *def_retry_take(struct def_retry *r, bool kernel_changed, long long now_ms);
/*
 * The private key file as it is now, to note with a failure (r->key_sig):
 * `join --rotate-key` writes the definition first and renames the new key
 * over the file right after. A definition that failed on the old key is
 * tried at once when the file changed, before the last good one meets the
 * new key ("does not match") and its pass fails for a second or two.
 */
uint64_t def_retry_key_sig(const char *key_file);
/* Something pending, and the key file changed since it failed. */
bool def_retry_key_changed(const struct def_retry *r, const char *key_file);
/* The definition taken last was applied: forget the failures (logged when there were some). */
void def_retry_succeeded(struct def_retry *r, const char *path);
/* A new file replaces whatever was pending. */
void def_retry_drop(struct def_retry *r);
/* Delay until the next attempt, >= 0; -1 when nothing is pending. */
long long def_retry_delay(const struct def_retry *r, long long now_ms);

#endif
