/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/metrics_conns.h - the metrics server's connection slots, and which
 * one a newcomer takes when they are all in use: kept apart from the HTTP
 * library (metrics_http.c) so that the choice can be tested on its own.
 */
#ifndef FABRICD_DAEMON_METRICS_CONNS_H
#define FABRICD_DAEMON_METRICS_CONNS_H

#include <stdbool.h>
#include <stddef.h>

/* connections served at once */
#define CONNS_LIMIT 16
/* connections libmicrohttpd may hold: an evicted one stays until it goes */
#define CONNS_MAX (2 * CONNS_LIMIT)
/*
 * An answer still being sent after this long goes to a client that reads it
 * slowly (a scraper gives up sooner: Prometheus's scrape_timeout is 10 s).
 */
#define CONNS_SLOW_ANSWER_MS 10000

/*
 * A connection. A client that sends a byte now and then is never idle for
 * the library's timeout: sixteen of them from four addresses held every slot
 * for as long as they dripped. One that reads its answer a byte now and then
 * is never idle either (at 64 nodes x 1024 vnets the answer is 2.35 MB, far
 * more than the socket takes at once).
 */
struct conn_slot {
	const void *c; /* the library's connection */
	int fd;
	long long since; /* accepted, its last answer done, or (busy) its request came: ms */
	bool busy;	 /* a request came: its answer is being made or sent */
	bool evicted;	 /* shut down for a newcomer: goes at the library's next look */
};

struct conn_slots {
	struct conn_slot slot[CONNS_MAX];
	size_t n;
};

struct conn_slot *conns_find(struct conn_slots *t, const void *c);
/* A connection accepted at now; false when the table is full (cannot be: the library keeps to
 * CONNS_MAX). */
bool conns_add(struct conn_slots *t, const void *c, int fd, long long now);
void conns_remove(struct conn_slots *t, const void *c);
/* A whole request came on c (the first call for it counts), or its answer is done. */
void conns_request(struct conn_slots *t, const void *c, long long now);
void conns_answered(struct conn_slots *t, const void *c, long long now);
/*
 * Before a newcomer is added at now: NULL with *refuse false when there is
 * room; else the slot it takes (the caller shuts its socket down and marks it
 * evicted): the connection that has waited longest for a whole request (idle,
 * or sending one slowly: a scraper sends its request at once), or with none
 * such the one whose answer has been sent longest, past
 * CONNS_SLOW_ANSWER_MS; NULL with *refuse true when every connection is
 * being answered, and not for that long.
 */
struct conn_slot *conns_victim(struct conn_slots *t, long long now, bool *refuse);
#endif
