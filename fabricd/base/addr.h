/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base/addr.h - IPv4/IPv6 addresses and prefixes, parsed and printed without DNS. */
#ifndef FABRICD_ADDR_H
#define FABRICD_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define IP_ADDR_STRLEN 46 /* INET6_ADDRSTRLEN */

struct ip_addr {
	int family;	   /* AF_INET or AF_INET6; 0 = unset */
	uint8_t bytes[16]; /* network order; IPv4 uses the first 4 */
};

struct ip_prefix {
	struct ip_addr addr;
	uint8_t len;
};

/* 0 on success, -EINVAL if text is not a literal IPv4 or IPv6 address. */
int ip_addr_parse(const char *text, struct ip_addr *out);
/* "10.0.0.0/24" or "fd00::/64"; host bits must be zero. -EINVAL otherwise. */
int ip_prefix_parse(const char *text, struct ip_prefix *out);

/* Writes the canonical text form into buf (at least IP_ADDR_STRLEN bytes). */
const char *ip_addr_str(const struct ip_addr *a, char *buf, size_t len);

size_t ip_addr_len(const struct ip_addr *a); /* 4, 16, or 0 */
bool ip_addr_equal(const struct ip_addr *a, const struct ip_addr *b);
/* Whether a is one of list[0..n). */
bool ip_addr_in(const struct ip_addr *a, const struct ip_addr *list, size_t n);
bool ip_prefix_contains(const struct ip_prefix *p, const struct ip_addr *a);
/*
 * Why a cannot be a node's unicast address on a network ("unspecified",
 * "loopback", "multicast", "broadcast", "link-local"), or NULL when it can.
 * IPv6 link-local needs an interface scope, which a definition cannot give.
 */
const char *ip_addr_unusable(const struct ip_addr *a);
/* An IPv6 link-local address (fe80::/10). */
bool ip_addr_is_link_local(const struct ip_addr *a);
/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d): the kernel's sockets take it as IPv4. */
bool ip_addr_is_v4mapped(const struct ip_addr *a);
/* p with the host bits of its address cleared: "10.255.0.1/24" is "10.255.0.0/24". */
struct ip_prefix ip_prefix_network(const struct ip_prefix *p);
/* Host route length: 32 or 128. */
uint8_t ip_addr_host_len(const struct ip_addr *a);

/* Fills a sockaddr_in/in6 for addr:port; returns its length or 0. */
socklen_t ip_addr_to_sockaddr(const struct ip_addr *a, uint16_t port, struct sockaddr_storage *ss);
/* Reverse of the above; -EAFNOSUPPORT for other families. */
int ip_addr_from_sockaddr(const struct sockaddr *sa, struct ip_addr *a, uint16_t *port);

/*
 * Splits "host:port", "[v6]:port" into host and port. -EINVAL when the form
 * is wrong or the port is not 1..65535.
 */
int endpoint_split(const char *text, char *host, size_t host_len, uint16_t *port);

#endif
