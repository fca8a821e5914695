/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * base/diag.h - a list of problems found in the input, each naming where (a JSON
 * path such as "zones[1].vnets[0].vni", or an object such as "vxlan vx100")
 * and what to do. Validation collects every problem before reporting, so an
 * operator fixes a file in one pass.
 */
#ifndef FABRICD_DIAG_H
#define FABRICD_DIAG_H

#include <stddef.h>

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
/* Prints every problem ("error: ...") and warning ("warning: ...") to f. */
#include <stdio.h>
void diag_print(const struct diag *d, FILE *f);

#endif
