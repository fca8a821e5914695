// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/resolve.c - peer endpoint names: getaddrinfo_a, a per-process cache, bounded waits. */
#define _GNU_SOURCE /* getaddrinfo_a */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/resolve.h"

struct name_entry {
	char host[FABRICD_HOST_MAX + 1];
	char port[8];
	int family;		      /* asked for: AF_INET, or AF_UNSPEC (either) */
	struct sockaddr_storage addr; /* family 0: no answer (yet) */
	long long refresh_ms;	      /* CLOCK_MONOTONIC: ask again from then */
	bool pending, answered, warned;
	struct addrinfo hints;
	struct gaicb req; /* getaddrinfo_a's; the entry stays put while it runs */
};

/* Entries are allocated one by one: a running request points into its entry. */
static struct {
	size_t n;
	struct name_entry **v;
} cache;

static struct name_entry *entry_get(const char *host, uint16_t port, int family)
{
	struct name_entry *e, **grown;
	char p[8];

	snprintf(p, sizeof(p), "%u", port);
	for (size_t i = 0; i < cache.n; i++) {
		if (!strcmp(cache.v[i]->host, host) && !strcmp(cache.v[i]->port, p) &&
		    cache.v[i]->family == family)
			return cache.v[i];
	}
	e = calloc(1, sizeof(*e));
	grown = e ? realloc(cache.v, (cache.n + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(e);
		return NULL;
	}
	cache.v = grown;
	cache.v[cache.n++] = e;
	snprintf(e->host, sizeof(e->host), "%s", host);
	snprintf(e->port, sizeof(e->port), "%s", p);
	e->family = family;
	return e;
}

/* Starts a background lookup. 0 or -1 (logged). */
static int entry_start(struct name_entry *e)
{
	struct gaicb *list[1] = {&e->req};
	int ret;

	memset(&e->hints, 0, sizeof(e->hints));
	e->hints.ai_family = e->family;
	e->hints.ai_socktype = SOCK_DGRAM;
	e->hints.ai_flags = AI_NUMERICSERV;
	memset(&e->req, 0, sizeof(e->req));
	e->req.ar_name = e->host;
	e->req.ar_service = e->port;
	e->req.ar_request = &e->hints;
	ret = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (ret) {
		log_warn("peer endpoint %s: cannot start resolving it: %s", e->host,
			 gai_strerror(ret));
		e->refresh_ms = monotonic_ms() + RESOLVE_RETRY_S * 1000LL;
		return -1;
	}
	e->pending = true;
	return 0;
}

/* Takes a finished lookup's answer. True when the answer changed. */
static bool entry_finish(struct name_entry *e)
{
	struct sockaddr_storage old = e->addr;
	int err = gai_error(&e->req);
	struct addrinfo *res = e->req.ar_result;

	if (err == EAI_INPROGRESS)
		return false;
	e->pending = false;
	if (!err && res && res->ai_addrlen <= sizeof(e->addr)) {
		memset(&e->addr, 0, sizeof(e->addr));
		memcpy(&e->addr, res->ai_addr, res->ai_addrlen);
		e->answered = true;
		e->warned = false;
		e->refresh_ms = monotonic_ms() + RESOLVE_TTL_S * 1000LL;
	} else {
		/* an earlier answer stays in use until a lookup gives another */
		if (!e->warned)
			log_warn(
			    "peer endpoint %s: does not resolve%s (%s); the peer is added without "
			    "an endpoint and is reached once it contacts this node",
			    e->host,
			    e->family == AF_INET
				? " to an IPv4 address (the fabric's MTU is WireGuard over IPv4's, "
				  "as the underlay addresses are; an IPv6 endpoint needs 20 bytes "
				  "more: give it as a literal, \"[v6]:port\")"
				: "",
			    err ? gai_strerror(err) : "no address");
		e->warned = true;
		e->refresh_ms = monotonic_ms() + RESOLVE_RETRY_S * 1000LL;
	}
	if (res)
		freeaddrinfo(res);
	e->req.ar_result = NULL;
	return memcmp(&old, &e->addr, sizeof(old)) != 0;
}

/* Waits until every entry in list has finished, or until deadline_ms. */
static void wait_for(struct name_entry **list, size_t n, long long deadline_ms)
{
	for (;;) {
		const struct gaicb *reqs[64];
		size_t k = 0;
		long long left = deadline_ms - monotonic_ms();
		struct timespec ts;

		for (size_t i = 0; i < n && k < 64; i++) {
			if (list[i]->pending && !entry_finish(list[i]) && list[i]->pending)
				reqs[k++] = &list[i]->req;
		}
		if (!k || left <= 0)
			return;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		gai_suspend(reqs, (int)k, &ts);
	}
}

/* an MTU computed for WireGuard over IPv4 has no room for IPv6's 20 bytes more */
static int lookup_family(int wg_family)
{
	return wg_family == AF_INET ? AF_INET : AF_UNSPEC;
}

/*
 * Asks for host (a name, not a literal) unless an answer is fresh: a name
 * never asked goes into fresh, to be waited for; a refresh runs while the
 * old answer serves.
 */
static void ask(const char *host, uint16_t port, int family, long long now,
		struct name_entry **fresh, size_t *n_fresh)
{
	struct name_entry *e = entry_get(host, port, family);

	if (!e)
		return;
	if (e->pending)
		entry_finish(e);
	if (!e->pending && (!e->refresh_ms || now >= e->refresh_ms) && entry_start(e) == 0 &&
	    !e->refresh_ms && *n_fresh < 64)
		fresh[(*n_fresh)++] = e;
}

void resolve_cluster_names(const struct cluster *c, size_t self, int wait_ms)
{
	int family = lookup_family(cluster_wg_family(c, c->nodes[self].underlay.family));
	struct name_entry *fresh[64];
	size_t n_fresh = 0;
	long long now = monotonic_ms();
	struct ip_addr literal;

	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];

		if (i != self && (n->flags & NODE_HAS_ENDPOINT) && n->endpoint_host[0] &&
		    ip_addr_parse(n->endpoint_host, &literal) < 0)
			ask(n->endpoint_host, n->endpoint_port, family, now, fresh, &n_fresh);
	}
	if (n_fresh)
		wait_for(fresh, n_fresh, now + wait_ms);
}

bool resolve_cached(const char *host, uint16_t port, int wg_family, struct ip_addr *out)
{
	struct name_entry *e = entry_get(host, port, lookup_family(wg_family));
	uint16_t ignored;

	if (e && e->pending)
		entry_finish(e);
	return e && e->addr.ss_family &&
	       ip_addr_from_sockaddr((const struct sockaddr *)&e->addr, out, &ignored) == 0;
}

void resolve_endpoints(struct node_state *want)
{
	int family = lookup_family(want->wg_family);

	for (size_t i = 0; i < want->fabric.n_peers; i++) {
		struct desired_peer *dp = &want->fabric.peers[i];
		struct name_entry *e;

		memset(&dp->endpoint, 0, sizeof(dp->endpoint));
		if (dp->endpoint_addr.family) {
			ip_addr_to_sockaddr(&dp->endpoint_addr, dp->endpoint_port, &dp->endpoint);
			continue;
		}
		if (!dp->endpoint_host[0] ||
		    !(e = entry_get(dp->endpoint_host, dp->endpoint_port, family)))
			continue;
		if (e->pending && !e->answered && !e->warned) {
			log_warn(
			    "peer endpoint %s: no answer within %d ms; the peer is added without "
			    "an endpoint for now, and gets it once the name resolves",
			    e->host, RESOLVE_WAIT_MS);
			e->warned = true;
		}
		dp->endpoint = e->addr;
	}
}

bool resolve_poll(void)
{
	bool changed = false;

	for (size_t i = 0; i < cache.n; i++) {
		if (cache.v[i]->pending && entry_finish(cache.v[i]))
			changed = true;
	}
	return changed;
}

void resolve_cache_free(void)
{
	size_t kept = 0;

	for (size_t i = 0; i < cache.n; i++) {
		struct name_entry *e = cache.v[i];

		if (e->pending && gai_cancel(&e->req) != EAI_CANCELED &&
		    gai_error(&e->req) == EAI_INPROGRESS) {
			cache.v[kept++] = e; /* still running: its memory must stay */
			continue;
		}
		if (e->req.ar_result)
			freeaddrinfo(e->req.ar_result);
		free(e);
	}
	cache.n = kept;
	if (!kept) {
		free(cache.v);
		cache.v = NULL;
	}
}
