// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_metrics_conns.c - which connection a newcomer to the metrics server
 * takes when every slot is in use: one waiting for a request first, then one
 * whose answer has been read for too long, never one being answered now.
 * (The whole server against real sockets: test_monitor_metrics.py; a client
 * that reads a 2.35 MB answer slowly needs a cluster of that size.)
 */
#include <stdbool.h>

#include "daemon/metrics_conns.h"
#include "unit.h"

static int conn[CONNS_MAX]; /* stand-ins for the library's connections: their addresses */

/* CONNS_LIMIT connections accepted at 0, each with a whole request at 1000 + i */
static void fill_busy(struct conn_slots *t)
{
	*t = (struct conn_slots){0};
	for (int i = 0; i < CONNS_LIMIT; i++) {
		CHECK(conns_add(t, &conn[i], 100 + i, 0), "connection %d", i);
		conns_request(t, &conn[i], 1000 + i);
	}
}

static void test_room_and_waiting(void)
{
	struct conn_slots t = {0};
	struct conn_slot *v;
	bool refuse = true;

	for (int i = 0; i < CONNS_LIMIT - 1; i++)
		conns_add(&t, &conn[i], 100 + i, i);
	CHECK(!conns_victim(&t, 50, &refuse) && !refuse, "room for one more");
	conns_add(&t, &conn[CONNS_LIMIT - 1], 200, 40);
	conns_request(&t, &conn[0], 45); /* the oldest is being answered */
	v = conns_victim(&t, 50, &refuse);
	CHECK(v && v->c == &conn[1] && !refuse,
	      "full: the one that has waited longest for a request, not one being answered");
	v->evicted = true;
	CHECK(!conns_victim(&t, 51, &refuse) && !refuse, "an evicted one leaves room");
	conns_remove(&t, &conn[1]);
	CHECK_INT(t.n, CONNS_LIMIT - 1, "gone when the library closes it");
	CHECK(!conns_find(&t, &conn[1]), "and not found");
}

static void test_slow_answers(void)
{
	struct conn_slots t;
	struct conn_slot *v;
	bool refuse = false;

	fill_busy(&t);
	CHECK(!conns_victim(&t, 1000 + CONNS_SLOW_ANSWER_MS - 1, &refuse) && refuse,
	      "every one being answered, none for long: refused");
	conns_request(&t, &conn[3], 5000); /* a later call for the same request counts not */
	v = conns_victim(&t, 1003 + CONNS_SLOW_ANSWER_MS, &refuse);
	CHECK(v && !refuse, "answers read for too long: one gives way");
	CHECK(v && v->c == &conn[0], "the one whose answer has been sent longest");
	conns_answered(&t, &conn[5], 1004 + CONNS_SLOW_ANSWER_MS);
	v = conns_victim(&t, 1005 + CONNS_SLOW_ANSWER_MS, &refuse);
	CHECK(v && v->c == &conn[5], "one waiting for a request before a slow reader");
	conns_request(&t, &conn[5], 1006 + CONNS_SLOW_ANSWER_MS);
	v = conns_victim(&t, 1006 + CONNS_SLOW_ANSWER_MS, &refuse);
	CHECK(v && v->c == &conn[0], "its new request starts its clock again");
}

int main(void)
{
	test_room_and_waiting();
	test_slow_answers();
	return unit_summary("test_metrics_conns");
}
