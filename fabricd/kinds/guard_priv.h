/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guard_priv.h - helpers shared by kinds/guard.c (kernel side) and
 * kinds/guard_render.c (text side): a growing string, a list of strings and the
 * summary format both sides produce ("counter NAME", "set NAME: e1, e2",
 * "chain NAME: TYPE HOOK PRIO POLICY, N rules", one per line, sorted).
 */
#ifndef FABRICD_FIREWALL_PRIV_H
#define FABRICD_FIREWALL_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "kinds/guard.h"

#define TABLE_NAME FIREWALL_FAMILY " " FIREWALL_TABLE
#define OBJECT	   "nftables table " TABLE_NAME

struct sbuf {
	char *buf;
	size_t len, cap;
	bool failed;
};

void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string (caller frees; "" when nothing was written), NULL after ENOMEM. Resets b. */
char *sbuf_take(struct sbuf *b);

struct strlist {
	size_t n, cap;
	char **v;
};

/* Appends a copy. 0 or -ENOMEM. */
int strlist_add(struct strlist *l, const char *s);
/* Sorts (strcmp) and drops duplicates. */
void strlist_sort(struct strlist *l);
void strlist_free(struct strlist *l);

/* Appends "set NAME: e1, e2" (elems sorted in place). 0 or -ENOMEM. */
int summary_set_line(struct strlist *lines, const char *name, struct strlist *elems);
/* The lines sorted, each ending in "\n"; NULL on ENOMEM. */
char *summary_join(struct strlist *lines);

#endif
