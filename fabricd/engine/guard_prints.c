// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/guard_prints.c - the guard's rule prints and their file (guard_prints.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/guard_prints.h"
#include "engine/lock.h"

static void prints_path(char *out, size_t len)
{
	snprintf(out, len, "%s/guard.net%llu.prints", NODE_LOCK_DIR, netns_inode());
}

void guard_prints_load(struct guard_prints *p)
{
	char path[256], mark[16];
	uint64_t print;
	FILE *f;

	memset(p, 0, sizeof(*p));
	prints_path(path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%15s %" SCNx64, mark, &print) == 2)
		guard_prints_add(p, mark, print);
	fclose(f);
}

int guard_prints_save(const struct guard_prints *p)
{
	char path[256], text[GUARD_PRINTS_MAX * 32];
	size_t used = 0;

	if (mkdir(NODE_LOCK_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	prints_path(path, sizeof(path));
	for (size_t i = 0; i < p->n; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s %016" PRIx64 "\n",
					 p->p[i].mark, p->p[i].print);
	return write_file_atomic(path, text, used, 0644, false);
}

void guard_prints_forget(void)
{
	char path[256];

	prints_path(path, sizeof(path));
	unlink(path);
}

bool guard_prints_kept(void)
{
	char path[256];

	prints_path(path, sizeof(path));
	return access(path, F_OK) == 0;
}

const struct guard_print *guard_prints_find(const struct guard_prints *p, const char *mark)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->p[i].mark, mark))
			return &p->p[i];
	}
	return NULL;
}

void guard_prints_add(struct guard_prints *p, const char *mark, uint64_t print)
{
	if (strlen(mark) >= sizeof(p->p[0].mark) || guard_prints_find(p, mark))
		return;
	if (p->n == GUARD_PRINTS_MAX) {
		p->full = true;
		return;
	}
	snprintf(p->p[p->n].mark, sizeof(p->p[0].mark), "%s", mark);
	p->p[p->n++].print = print;
}
