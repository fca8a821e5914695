// SPDX-License-Identifier: GPL-2.0-or-later
/* base/addr.c - IPv4/IPv6 addresses and prefixes, parsed and printed without DNS. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"

int ip_addr_parse(const char *text, struct ip_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (!text)
		return -EINVAL;
	if (inet_pton(AF_INET, text, out->bytes) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, out->bytes) == 1) {
		out->family = AF_INET6;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}

int ip_prefix_parse(const char *text, struct ip_prefix *out)
{
	char buf[IP_ADDR_STRLEN + 8];
	char *slash, *end;
	unsigned long len;

	memset(out, 0, sizeof(*out));
	if (!text || strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (!slash || slash[1] == '\0')
		return -EINVAL;
	*slash = '\0';
	errno = 0;
	len = strtoul(slash + 1, &end, 10);
	if (errno || *end || slash[1] < '0' || slash[1] > '9')
		return -EINVAL;
	if (ip_addr_parse(buf, &out->addr) < 0)
		return -EINVAL;
	if (len > ip_addr_host_len(&out->addr))
		return -EINVAL;
	out->len = (uint8_t)len;
	/* host bits must be zero: "10.0.0.1/24" is an address, not a prefix */
	for (size_t bit = len; bit < ip_addr_len(&out->addr) * 8; bit++) {
		if (out->addr.bytes[bit / 8] & (0x80 >> (bit % 8)))
			return -EINVAL;
	}
	return 0;
}

const char *ip_addr_str(const struct ip_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, a->bytes, buf, (socklen_t)len))
		snprintf(buf, len, "(none)");
	return buf;
}

size_t ip_addr_len(const struct ip_addr *a)
{
	return a->family == AF_INET ? 4 : a->family == AF_INET6 ? 16 : 0;
}

const char *ip_addr_unusable(const struct ip_addr *a)
{
	static const uint8_t zero[16];
	const uint8_t *b = a->bytes;

	if (a->family == AF_INET) {
		if (!memcmp(b, zero, 4))
			return "unspecified";
		if (b[0] == 127)
			return "loopback";
		if (b[0] >= 224 && b[0] <= 239)
			return "multicast";
		if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255)
			return "broadcast";
		return NULL;
	}
	if (a->family != AF_INET6)
		return NULL;
	if (!memcmp(b, zero, 16))
		return "unspecified";
	if (!memcmp(b, zero, 15) && b[15] == 1)
		return "loopback";
	if (b[0] == 0xff)
		return "multicast";
	if (ip_addr_is_link_local(a))
		return "link-local";
	return NULL;
}

bool ip_addr_is_link_local(const struct ip_addr *a)
{
	return a->family == AF_INET6 && a->bytes[0] == 0xfe && (a->bytes[1] & 0xc0) == 0x80;
}

bool ip_addr_is_v4mapped(const struct ip_addr *a)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return a->family == AF_INET6 && !memcmp(a->bytes, v4mapped, sizeof(v4mapped));
}

struct ip_prefix ip_prefix_network(const struct ip_prefix *p)
{
	struct ip_prefix n = *p;

	/* as ip_prefix_contains: whole bytes, then the byte the length ends in */
	for (size_t i = p->len / 8U; i < ip_addr_len(&n.addr); i++)
		n.addr.bytes[i] &= i == p->len / 8U ? (uint8_t)(0xff00U >> (p->len % 8U)) : 0;
	return n;
}

uint8_t ip_addr_host_len(const struct ip_addr *a)
{
	return (uint8_t)(ip_addr_len(a) * 8);
}

bool ip_addr_equal(const struct ip_addr *a, const struct ip_addr *b)
{
	return a->family == b->family && !memcmp(a->bytes, b->bytes, ip_addr_len(a));
}

bool ip_addr_in(const struct ip_addr *a, const struct ip_addr *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ip_addr_equal(a, &list[i]))
			return true;
	return false;
}

bool ip_prefix_contains(const struct ip_prefix *p, const struct ip_addr *a)
{
	size_t full = p->len / 8;
	unsigned int rest = p->len % 8;

	if (p->addr.family != a->family)
		return false;
	if (memcmp(p->addr.bytes, a->bytes, full))
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		if ((p->addr.bytes[full] & mask) != (a->bytes[full] & mask))
			return false;
	}
	return true;
}

socklen_t ip_addr_to_sockaddr(const struct ip_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->bytes, 4);
		return sizeof(*sin);
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->bytes, 16);
		return sizeof(*sin6);
	}
	return 0;
}

int ip_addr_from_sockaddr(const struct sockaddr *sa, struct ip_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		a->family = AF_INET;
		memcpy(a->bytes, &sin->sin_addr, 4);
		if (port)
			*port = ntohs(sin->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		a->family = AF_INET6;
		memcpy(a->bytes, &sin6->sin6_addr, 16);
		if (port)
			*port = ntohs(sin6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

int endpoint_split(const char *text, char *host, size_t host_len, uint16_t *port)
{
	const char *colon, *hstart, *hend;
	char *end;
	unsigned long p;

	if (!text || !*text)
		return -EINVAL;
	if (text[0] == '[') {
		hstart = text + 1;
		hend = strchr(hstart, ']');
		if (!hend || hend[1] != ':')
			return -EINVAL;
		colon = hend + 1;
	} else {
		hstart = text;
		colon = strrchr(text, ':');
		if (!colon)
			return -EINVAL;
		hend = colon;
		/* a bare IPv6 address has several colons: it needs brackets */
		if (memchr(text, ':', (size_t)(colon - text)))
			return -EINVAL;
	}
	if (hend == hstart || (size_t)(hend - hstart) >= host_len)
		return -EINVAL;
	/* 1 to 5 digits, as the schema's pattern: "051900" is not port 51900 */
	if (colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || p < 1 || p > 65535)
		return -EINVAL;
	memcpy(host, hstart, (size_t)(hend - hstart));
	host[hend - hstart] = '\0';
	*port = (uint16_t)p;
	return 0;
}
