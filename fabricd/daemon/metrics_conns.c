// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/metrics_conns.c - the metrics server's connection slots (see the header). */
#include "daemon/metrics_conns.h"

struct conn_slot *conns_find(struct conn_slots *t, const void *c)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->slot[i].c == c)
			return &t->slot[i];
	}
	return NULL;
}

bool conns_add(struct conn_slots *t, const void *c, int fd, long long now)
{
	if (conns_find(t, c) || t->n == CONNS_MAX)
		return false;
	t->slot[t->n++] = (struct conn_slot){.c = c, .fd = fd, .since = now};
	return true;
}

void conns_remove(struct conn_slots *t, const void *c)
{
	struct conn_slot *s = conns_find(t, c);

	if (s)
		*s = t->slot[--t->n];
}

void conns_request(struct conn_slots *t, const void *c, long long now)
{
	struct conn_slot *s = conns_find(t, c);

	if (s && !s->busy) {
		s->busy = true;
		s->since = now;
	}
}

void conns_answered(struct conn_slots *t, const void *c, long long now)
{
	struct conn_slot *s = conns_find(t, c);

	if (s) {
		s->busy = false;
		s->since = now;
	}
}

struct conn_slot *conns_victim(struct conn_slots *t, long long now, bool *refuse)
{
	struct conn_slot *waiting = NULL, *slowest = NULL;
	size_t live = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct conn_slot *s = &t->slot[i];

		if (s->evicted)
			continue;
		live++;
		if (!s->busy && (!waiting || s->since < waiting->since))
			waiting = s;
		if (s->busy && now - s->since >= CONNS_SLOW_ANSWER_MS &&
		    (!slowest || s->since < slowest->since))
			slowest = s;
	}
	*refuse = false;
	if (live < CONNS_LIMIT)
		return NULL;
	if (!waiting)
		waiting = slowest;
	*refuse = !waiting;
	return waiting;
}
