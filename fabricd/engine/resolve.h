/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/resolve.h - peer endpoints given as host names, resolved to addresses. */
#ifndef FABRICD_RESOLVE_H
#define FABRICD_RESOLVE_H

#include <sys/socket.h>

#include "definition/desired.h"

/* The endpoint a peer should have; ss_family 0 when a DNS name does not resolve. */
void peer_endpoint(const struct desired_peer *dp, struct sockaddr_storage *ss);

#endif
