// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/probe_entry.c - the probe entries' index by (zone, peer) (probe_entry.h). */
#include <stdlib.h>
#include <string.h>

#include "daemon/probe_entry.h"

int probe_target_cmp(const struct probe_target *a, const struct probe_target *b)
{
	int c = strcmp(a->zone, b->zone);

	return c ? c : strcmp(a->peer, b->peer);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a;
	const struct entry *y = *(const struct entry *const *)b;
	int c = probe_target_cmp(&x->r.target, &y->r.target);

	/* one (peer, zone) twice: in list order (one array), the last is the one kept */
	return c ? c : x < y ? -1 : x > y;
}

struct entry_index entry_index_make(const struct entry *es, size_t n, bool measured_only)
{
	struct entry_index x = {.es = es, .n = n, .measured_only = measured_only};

	x.by = n ? malloc(n * sizeof(*x.by)) : NULL;
	if (!x.by)
		return x;
	for (size_t k = 0; k < n; k++) {
		if (!measured_only || es[k].r.measured)
			x.by[x.n_by++] = &es[k];
	}
	qsort(x.by, x.n_by, sizeof(*x.by), entry_cmp);
	return x;
}

const struct entry *entry_find(const struct entry_index *x, const struct probe_target *t)
{
	const struct entry *found = NULL;
	size_t lo = 0, hi = x->n_by;

	if (!x->by) {
		for (size_t k = 0; k < x->n; k++) {
			if ((!x->measured_only || x->es[k].r.measured) &&
			    !probe_target_cmp(&x->es[k].r.target, t))
				found = &x->es[k];
		}
		return found;
	}
	/* the first entry above t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (probe_target_cmp(&x->by[mid]->r.target, t) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && !probe_target_cmp(&x->by[lo - 1]->r.target, t) ? x->by[lo - 1] : NULL;
}

bool probe_same_path(const struct probe_target *a, const struct probe_target *b)
{
	return a->mtu == b->mtu && !strcmp(a->transport, b->transport) &&
	       a->old_receives == b->old_receives;
}
