/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * base/diag.h - a list of problems found in the input, each naming where (a JSON
 * path such as "zones[1].vnets[0].vni", or an object such as "vxlan vx100")
 * and what to do. Validation collects every problem before reporting, so an
 * operator fixes a file in one pass.
 */
#ifndef FABRICD_DIAG_H
#define FABRICD_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag {
	size_t n;
	char **msgs; /* "PATH: problem; what to do" */
	size_t n_warnings;
	char **warnings;
};

void diag_init(struct diag *d);
void diag_free(struct diag *d);
/* Adds "path: message" (printf-style message). */
void diag_add(struct diag *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_warn(struct diag *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The problems from index from on become warnings, each with suffix appended. */
void diag_demote(struct diag *d, size_t from, const char *suffix);
/* Prints every problem ("error: ...") and warning ("warning: ...") to f. */
#include <stdio.h>
void diag_print(const struct diag *d, FILE *f);

/*
 * The warnings a repeating source (the daemon's passes, its reloads) said
 * last, each by its digest: each warning is said once while it lasts, and
 * again when it comes back after a time without it, whatever other
 * warnings come and go meanwhile. Past DIAG_SAID_MAX warnings the rest are
 * one digest: said again, all of them, when any of them changes.
 */
#define DIAG_SAID_MAX 128
struct diag_said {
	size_t n;
	uint64_t digests[DIAG_SAID_MAX];
	uint64_t rest; /* digest of the warnings past DIAG_SAID_MAX, 0: none */
};
/*
 * diag_print, with errors only if errors, and of d's warnings only those
 * not in *said (all of them if said is NULL); then *said holds d's.
 */
void diag_print_new(const struct diag *d, bool errors, struct diag_said *said, FILE *f);

#endif
