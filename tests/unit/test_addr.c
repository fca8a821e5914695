// SPDX-License-Identifier: GPL-2.0-or-later
/* test_addr.c - address and prefix parsing, containment, endpoints. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "unit.h"

static const struct {
	const char *text;
	int family; /* 0: must be rejected */
	const char *canon;
} addrs[] = {
    {"192.0.2.1", AF_INET, "192.0.2.1"},
    {"0.0.0.0", AF_INET, "0.0.0.0"},
    {"255.255.255.255", AF_INET, "255.255.255.255"},
    {"2001:db8::1", AF_INET6, "2001:db8::1"},
    {"2001:DB8:0:0:0:0:0:1", AF_INET6, "2001:db8::1"},
    {"::", AF_INET6, "::"},
    {"::ffff:192.0.2.1", AF_INET6, "::ffff:192.0.2.1"},
    {"", 0, NULL},
    {"192.0.2", 0, NULL},
    {"192.0.2.1.5", 0, NULL},
    {"256.0.0.1", 0, NULL},
    {" 192.0.2.1", 0, NULL},
    {"192.0.2.1 ", 0, NULL},
    {"192.0.2.1/32", 0, NULL},
    {"fe80::1%eth0", 0, NULL},
    {"[2001:db8::1]", 0, NULL},
    {"2001:db8:::1", 0, NULL},
    {"pve1.example.net", 0, NULL},
};

static const struct {
	const char *text;
	int ok;
	unsigned int len;
} prefixes[] = {
    {"10.255.0.0/24", 1, 24},
    {"10.255.0.0/16", 1, 16},
    {"0.0.0.0/0", 1, 0},
    {"192.0.2.1/32", 1, 32},
    {"10.255.0.0/31", 1, 31},
    {"10.240.0.0/12", 1, 12},
    {"fd00:255::/64", 1, 64},
    {"::/0", 1, 0},
    {"2001:db8::1/128", 1, 128},
    {"10.255.0.1/24", 0, 0},  /* host bits */
    {"10.241.0.0/12", 0, 0},  /* host bit inside a byte */
    {"fd00::1/64", 0, 0},     /* host bits */
    {"10.255.0.0", 0, 0},     /* no length */
    {"10.255.0.0/", 0, 0},    /* empty length */
    {"/24", 0, 0},	      /* no address */
    {"10.255.0.0/33", 0, 0},  /* too long for IPv4 */
    {"fd00::/129", 0, 0},     /* too long for IPv6 */
    {"10.255.0.0/-1", 0, 0},  /* sign */
    {"10.255.0.0/+8", 0, 0},  /* sign */
    {"10.255.0.0/ 8", 0, 0},  /* space */
    {"10.255.0.0/24x", 0, 0}, /* trailing text */
    {"10.255.0.0/24/8", 0, 0},
    {"pve1/24", 0, 0},
    {"10.255.0.0/99999999999999999999999", 0, 0},
    {"0000000000000000000000000000000000000000000000000000000.0.0.0/8", 0, 0}, /* too long */
};

static const struct {
	const char *prefix, *addr;
	int in;
} contains[] = {
    {"10.255.0.0/24", "10.255.0.1", 1},
    {"10.255.0.0/24", "10.255.0.255", 1},
    {"10.255.0.0/24", "10.255.1.0", 0},
    {"10.255.0.0/24", "10.254.255.255", 0},
    {"10.240.0.0/12", "10.255.255.255", 1},
    {"10.240.0.0/12", "10.239.255.255", 0},
    {"0.0.0.0/0", "203.0.113.9", 1},
    {"192.0.2.1/32", "192.0.2.1", 1},
    {"192.0.2.1/32", "192.0.2.2", 0},
    {"fd00:255::/64", "fd00:255::ffff:ffff:ffff:ffff", 1},
    {"fd00:255::/64", "fd00:255:0:1::", 0},
    {"fd00:255::/63", "fd00:255:0:1::1", 1},
    {"::/0", "2001:db8::1", 1},
    {"::/0", "192.0.2.1", 0}, /* families never mix */
    {"0.0.0.0/0", "::1", 0},
    {"::ffff:0:0/96", "192.0.2.1", 0},
};

static const struct {
	const char *text;
	int ok;
	const char *host;
	unsigned int port;
} endpoints[] = {
    {"pve1.example.net:51820", 1, "pve1.example.net", 51820},
    {"192.0.2.1:1", 1, "192.0.2.1", 1},
    {"h:65535", 1, "h", 65535},
    {"[2001:db8::1]:51820", 1, "2001:db8::1", 51820},
    {"[::]:9", 1, "::", 9},
    {"[pve1]:1", 1, "pve1", 1}, /* syntax only: the loader insists on IPv6 inside */
    {"h:0", 0, NULL, 0},
    {"h:65536", 0, NULL, 0},
    {"h:", 0, NULL, 0},
    {":51820", 0, NULL, 0},
    {"h", 0, NULL, 0},
    {"", 0, NULL, 0},
    {"h:+1", 0, NULL, 0},
    {"h:-1", 0, NULL, 0},
    {"h: 1", 0, NULL, 0},
    {"h:1x", 0, NULL, 0},
    {"h:99999999999999999999", 0, NULL, 0},
    {"h:09999", 1, "h", 9999},
    {"h:051820", 0, NULL, 0}, /* over 5 digits, as the schema's pattern */
    {"h:0000000051820", 0, NULL, 0},
    {"2001:db8::1:51820", 0, NULL, 0}, /* IPv6 needs brackets */
    {"[2001:db8::1]51820", 0, NULL, 0},
    {"[2001:db8::1]", 0, NULL, 0},
    {"[2001:db8::1:51820", 0, NULL, 0},
    {"[]:1", 0, NULL, 0},
};

static void test_parse(void)
{
	char buf[IP_ADDR_STRLEN];
	struct ip_addr a;

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		int ret = ip_addr_parse(addrs[i].text, &a);

		if (!addrs[i].family) {
			CHECK_INT(ret, -EINVAL, "\"%s\" rejected", addrs[i].text);
			CHECK_INT(a.family, 0, "\"%s\" leaves nothing", addrs[i].text);
			continue;
		}
		CHECK_INT(ret, 0, "\"%s\" parses", addrs[i].text);
		CHECK_INT(a.family, addrs[i].family, "\"%s\" family", addrs[i].text);
		CHECK_STR(ip_addr_str(&a, buf, sizeof(buf)), addrs[i].canon, "\"%s\" canonical",
			  addrs[i].text);
	}
	CHECK_INT(ip_addr_parse(NULL, &a), -EINVAL, "NULL");
	memset(&a, 0, sizeof(a));
	CHECK_STR(ip_addr_str(&a, buf, sizeof(buf)), "(none)", "unset address prints");
}

static void test_prefix(void)
{
	struct ip_prefix p;

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		int ret = ip_prefix_parse(prefixes[i].text, &p);

		if (prefixes[i].ok) {
			CHECK_INT(ret, 0, "\"%s\" parses", prefixes[i].text);
			CHECK_INT(p.len, prefixes[i].len, "\"%s\" length", prefixes[i].text);
		} else {
			CHECK_INT(ret, -EINVAL, "\"%s\" rejected", prefixes[i].text);
		}
	}
	CHECK_INT(ip_prefix_parse(NULL, &p), -EINVAL, "NULL");
}

static void test_network(void)
{
	static const struct {
		const char *prefix, *network;
	} cases[] = {
	    {"10.255.0.1/24", "10.255.0.0"},
	    {"10.255.0.129/25", "10.255.0.128"},
	    {"10.255.7.1/21", "10.255.0.0"},
	    {"10.1.2.3/32", "10.1.2.3"},
	    {"10.1.2.3/0", "0.0.0.0"},
	    {"fd00:255::1/64", "fd00:255::"},
	    {"fd00:255::1:2/127", "fd00:255::1:2"},
	    {"fd00:ffff::1/17", "fd00:8000::"},
	};
	char a[IP_ADDR_STRLEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ip_prefix p, n;

		/* ip_prefix_parse refuses host bits: the address, then its length */
		char text[64];
		char *slash;

		snprintf(text, sizeof(text), "%s", cases[i].prefix);
		slash = strchr(text, '/');
		*slash = '\0';
		CHECK_INT(ip_addr_parse(text, &p.addr), 0, "%s", cases[i].prefix);
		p.len = (uint8_t)atoi(slash + 1);
		n = ip_prefix_network(&p);
		CHECK_STR(ip_addr_str(&n.addr, a, sizeof(a)), cases[i].network, "network of %s",
			  cases[i].prefix);
		CHECK_INT(n.len, p.len, "%s keeps its length", cases[i].prefix);
	}
}

static void test_unusable(void)
{
	static const struct {
		const char *addr, *why;
	} cases[] = {
	    {"0.0.0.0", "unspecified"},
	    {"127.0.0.1", "loopback"},
	    {"127.255.0.9", "loopback"},
	    {"224.0.0.1", "multicast"},
	    {"239.255.255.255", "multicast"},
	    {"255.255.255.255", "broadcast"},
	    {"::", "unspecified"},
	    {"::1", "loopback"},
	    {"ff02::1", "multicast"},
	    {"fe80::12", "link-local"},
	    {"febf::1", "link-local"},
	    {"192.0.2.11", NULL},
	    {"169.254.1.1", NULL},
	    {"240.0.0.1", NULL},
	    {"2001:db8::1", NULL},
	    {"fd00::1", NULL},
	    {"fec0::1", NULL},
	    {"::ffff:192.0.2.1", NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ip_addr a;
		const char *why;

		CHECK_INT(ip_addr_parse(cases[i].addr, &a), 0, "%s", cases[i].addr);
		why = ip_addr_unusable(&a);
		CHECK_STR(why ? why : "(usable)", cases[i].why ? cases[i].why : "(usable)", "%s",
			  cases[i].addr);
	}
}

static void test_contains(void)
{
	for (size_t i = 0; i < sizeof(contains) / sizeof(contains[0]); i++) {
		struct ip_prefix p;
		struct ip_addr a;

		CHECK_INT(ip_prefix_parse(contains[i].prefix, &p), 0, "%s", contains[i].prefix);
		CHECK_INT(ip_addr_parse(contains[i].addr, &a), 0, "%s", contains[i].addr);
		CHECK_INT(ip_prefix_contains(&p, &a), contains[i].in, "%s in %s", contains[i].addr,
			  contains[i].prefix);
	}
}

static void test_endpoints(void)
{
	char host[64], tiny[4];
	uint16_t port;

	for (size_t i = 0; i < sizeof(endpoints) / sizeof(endpoints[0]); i++) {
		int ret = endpoint_split(endpoints[i].text, host, sizeof(host), &port);

		if (!endpoints[i].ok) {
			CHECK_INT(ret, -EINVAL, "\"%s\" rejected", endpoints[i].text);
			continue;
		}
		CHECK_INT(ret, 0, "\"%s\" splits", endpoints[i].text);
		CHECK_STR(host, endpoints[i].host, "\"%s\" host", endpoints[i].text);
		CHECK_INT(port, endpoints[i].port, "\"%s\" port", endpoints[i].text);
	}
	CHECK_INT(endpoint_split(NULL, host, sizeof(host), &port), -EINVAL, "NULL");
	CHECK_INT(endpoint_split("abc:1", tiny, sizeof(tiny), &port), 0, "host fits exactly");
	CHECK_INT(endpoint_split("abcd:1", tiny, sizeof(tiny), &port), -EINVAL, "host too long");
	CHECK_INT(endpoint_split("[::1]:1", tiny, sizeof(tiny), &port), 0, "bracketed fits");
	CHECK_INT(endpoint_split("[::12]:1", tiny, sizeof(tiny), &port), -EINVAL,
		  "bracketed too long");
}

static void test_compare(void)
{
	struct ip_addr a, b, c, z4, z6;

	ip_addr_parse("192.0.2.1", &a);
	ip_addr_parse("192.0.2.2", &b);
	ip_addr_parse("2001:db8::1", &c);
	ip_addr_parse("0.0.0.0", &z4);
	ip_addr_parse("::", &z6);
	CHECK(ip_addr_equal(&a, &a), "equal to itself");
	CHECK(!ip_addr_equal(&a, &b), "different addresses");
	CHECK(!ip_addr_equal(&z4, &z6), "0.0.0.0 is not ::");
	CHECK_INT(ip_addr_len(&a), 4, "IPv4 length");
	CHECK_INT(ip_addr_len(&c), 16, "IPv6 length");
	CHECK_INT(ip_addr_host_len(&a), 32, "IPv4 host route");
	CHECK_INT(ip_addr_host_len(&c), 128, "IPv6 host route");
}

static void test_sockaddr(void)
{
	struct sockaddr_storage ss;
	struct ip_addr a, back;
	uint16_t port = 0;
	char buf[IP_ADDR_STRLEN];

	ip_addr_parse("192.0.2.7", &a);
	CHECK_INT(ip_addr_to_sockaddr(&a, 51820, &ss), sizeof(struct sockaddr_in), "IPv4 length");
	CHECK_INT(ntohs(((struct sockaddr_in *)&ss)->sin_port), 51820, "port in network order");
	CHECK_INT(ip_addr_from_sockaddr((struct sockaddr *)&ss, &back, &port), 0, "back");
	CHECK(ip_addr_equal(&a, &back) && port == 51820, "IPv4 round trip");

	ip_addr_parse("2001:db8::7", &a);
	CHECK_INT(ip_addr_to_sockaddr(&a, 1, &ss), sizeof(struct sockaddr_in6), "IPv6 length");
	CHECK_INT(ip_addr_from_sockaddr((struct sockaddr *)&ss, &back, NULL), 0, "back, no port");
	CHECK_STR(ip_addr_str(&back, buf, sizeof(buf)), "2001:db8::7", "IPv6 round trip");

	memset(&a, 0, sizeof(a));
	CHECK_INT(ip_addr_to_sockaddr(&a, 1, &ss), 0, "unset family");
	ss.ss_family = AF_UNIX;
	CHECK_INT(ip_addr_from_sockaddr((struct sockaddr *)&ss, &back, NULL), -EAFNOSUPPORT,
		  "other family");
}

int main(void)
{
	test_parse();
	test_prefix();
	test_contains();
	test_network();
	test_unusable();
	test_endpoints();
	test_compare();
	test_sockaddr();
	return unit_summary("test_addr");
}
