/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/resolve.h - peer endpoints given as host names, resolved before
 * planning, never inside it: getaddrinfo_a in the background, answers cached
 * for the process (the daemon keeps them across passes), and a pass waits at
 * most RESOLVE_WAIT_MS, once per name, for a name it has never resolved. A
 * name whose resolver does not answer leaves its peer without an endpoint
 * (reached once it contacts this node) and is asked again in the background.
 */
#ifndef FABRICD_RESOLVE_H
#define FABRICD_RESOLVE_H

#include <stdbool.h>

#include "definition/desired.h"

/* The longest a pass waits for names it sees for the first time, in all. */
#define RESOLVE_WAIT_MS 1000
/* getaddrinfo gives no TTL: an answer is asked again after this long (kept meanwhile). */
#define RESOLVE_TTL_S 60
/* A name that did not resolve is asked again after this long. */
#define RESOLVE_RETRY_S 5

/*
 * Asks for the endpoint names of c's nodes other than self (literals need
 * none), in the family the fabric's MTU is for (cluster_wg_family), waiting
 * up to wait_ms for names never asked before; a refresh runs while the old
 * answer serves. Before the underlay's MTU is measured, which takes the
 * route to each endpoint as wg-quick does (engine/underlay.c).
 */
void resolve_cluster_names(const struct cluster *c, size_t self, int wait_ms);
/* The address host resolved to last, if it has; never blocks. wg_family: as above. */
bool resolve_cached(const char *host, uint16_t port, int wg_family, struct ip_addr *out);

/*
 * Fills want's desired_peer.endpoint: literals at once, names as
 * resolve_cluster_names left them (a name still unanswered: none, said once).
 */
void resolve_endpoints(struct node_state *want);

/*
 * True when a lookup that finished since the last call changed an answer:
 * the daemon plans again. Never blocks.
 */
bool resolve_poll(void);

/* Cancels what is pending and frees the cache (at exit). */
void resolve_cache_free(void);

#endif
