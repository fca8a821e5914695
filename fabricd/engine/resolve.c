// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/resolve.c - peer endpoints given as host names, resolved to addresses. */
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "engine/resolve.h"

/* The endpoint a peer should have; ss_family 0 when a DNS name does not resolve. */
void peer_endpoint(const struct desired_peer *dp, struct sockaddr_storage *ss)
{
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char port[8];

	memset(ss, 0, sizeof(*ss));
	if (dp->endpoint_addr.family) {
		ip_addr_to_sockaddr(&dp->endpoint_addr, dp->endpoint_port, ss);
		return;
	}
	snprintf(port, sizeof(port), "%u", dp->endpoint_port);
	if (getaddrinfo(dp->endpoint_host, port, &hints, &res) != 0 || !res) {
		log_warn("peer endpoint %s: does not resolve; the peer is added without an "
			 "endpoint and is reached once it contacts this node",
			 dp->endpoint_host);
		return;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}
