/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/guard_prints.h - what fabricd's own guard rules were when it wrote
 * them: each rule's mark (the hash of its text in its comment,
 * kinds/guard_chains.c) with a hash of its expressions as the kernel keeps
 * them. A rule rewritten by hand that copies fabricd's comment keeps the
 * mark but not the expressions: the reader (engine/guard_nl.c) shows it as
 * altered. Kept in /run/fabricd/guard.net<inode>.prints (gone with a reboot,
 * as the table is); without it nothing is checked, as before.
 */
#ifndef FABRICD_GUARD_PRINTS_H
#define FABRICD_GUARD_PRINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUARD_PRINTS_MAX 32

struct guard_print {
	char mark[8]; /* six hex digits */
	uint64_t print;
};

struct guard_prints {
	size_t n;
	bool full; /* more rules than fit: not a table fabricd makes */
	struct guard_print p[GUARD_PRINTS_MAX];
};

/* Reads the file into p (n = 0 when there is none or it cannot be read). */
void guard_prints_load(struct guard_prints *p);
/* Writes p as the file, atomically. 0 or -errno. */
int guard_prints_save(const struct guard_prints *p);
/* Removes the file (down). */
void guard_prints_forget(void);
/* Whether the file exists. */
bool guard_prints_kept(void);
/* The print recorded for mark, or NULL. */
const struct guard_print *guard_prints_find(const struct guard_prints *p, const char *mark);
/* Records a rule's mark and print (a mark seen twice keeps its first print). */
void guard_prints_add(struct guard_prints *p, const char *mark, uint64_t print);

#endif
