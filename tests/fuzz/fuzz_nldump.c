// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_nldump.c - libFuzzer harness for the parsers of what the kernel and
 * wireguard-go answer: the rtnetlink dump parsers (link_parse, fdb_parse,
 * ifaddr_parse), the kernel WireGuard dump parser (wg_genl_parse_device)
 * and the wireguard-go UAPI answer parser (wg_uapi_parse_get).
 *
 * The first byte chooses how the rest is read (byte % 3):
 *   0  a stream of rtnetlink messages, as a dump delivers them (and as
 *      tests/fixtures/nl/<name>/{links,fdb,addrs}.nl record them); every
 *      message goes to all three rtnetlink parsers;
 *   1  a stream of WG_CMD_GET_DEVICE replies (generic netlink), merged into
 *      one zeroed device as the kernel backend's dump does;
 *   2  a wireguard-go "get=1" answer (text, NUL-terminated here).
 * The messages are copied into a buffer of their exact size, so ASan sees
 * any read past the end, and aligned, as a receive buffer is. The stream is
 * walked like tests/unit/test_plan.c walks a recorded dump (mnl_nlmsg_ok /
 * mnl_nlmsg_next), with one more length check: see msg_ok().
 *
 * Beyond memory safety, a success must keep what the callers rely on (names
 * NUL-terminated, a known address family, prefix lengths in range for the
 * WireGuard parsers); otherwise the harness traps.
 *
 * Seeds: `make run` prefixes the recorded fixtures with their selector byte;
 * seeds-nl/ holds hand-made inputs (written by make_nl_seeds.py).
 */
#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kinds/fdb.h"
#include "kinds/ifaddr.h"
#include "kinds/link.h"
#include "wireguard/wg.h"
#include "wireguard/genl.h"
#include "wireguard/uapi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum input_kind {
	INPUT_RTNL = 0,
	INPUT_GENL = 1,
	INPUT_UAPI = 2,
};

/* The owner mark link_is_owned() and link_stage_note() are asked about. */
#define FUZZ_OWNER "fabricd:fuzz"

static void check_str(const char *s, size_t size)
{
	if (!memchr(s, '\0', size))
		__builtin_trap();
}

static void check_family(const struct ip_addr *a)
{
	char buf[IP_ADDR_STRLEN];

	if (a->family != AF_INET && a->family != AF_INET6)
		__builtin_trap();
	if (!ip_addr_str(a, buf, sizeof(buf)))
		__builtin_trap();
}

static void fuzz_link(const struct nlmsghdr *nlh)
{
	struct link_obs l;

	if (link_parse(nlh, &l) < 0)
		return;
	check_str(l.name, sizeof(l.name));
	check_str(l.kind, sizeof(l.kind));
	check_str(l.slave_kind, sizeof(l.slave_kind));
	/* a borrowed alias: inside the message (libmnl's walk reaches its padding), ended there */
	if (l.alias) {
		const char *end = (const char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len);

		if (l.alias < (const char *)nlh || l.alias >= end)
			__builtin_trap();
		check_str(l.alias, (size_t)(end - l.alias));
	}
	if (!l.name[0])
		__builtin_trap();
	if (l.local.family)
		check_family(&l.local);
	/* the alias notes are parsed again by the planner */
	struct stage_note n;

	if (link_stage_note(&l, FUZZ_OWNER, LINK_RETIRE_NOTE, &n) &&
	    (n.after <= 0 || n.at < 0 || n.grace > 86400))
		__builtin_trap();
	if (link_stage_note(&l, FUZZ_OWNER, LINK_HOLD_NOTE, &n) &&
	    (n.after <= 0 || n.at < 0 || n.grace > 86400))
		__builtin_trap();
}

static void fuzz_fdb(const struct nlmsghdr *nlh)
{
	struct fdb_entry e;
	int ret = fdb_parse(nlh, &e);

	if (ret < 0 || ret > 1)
		__builtin_trap();
	if (ret == 1)
		check_family(&e.dst);
}

static void fuzz_ifaddr(const struct nlmsghdr *nlh)
{
	struct ifaddr_entry e;

	if (ifaddr_parse(nlh, &e) < 0)
		return;
	check_family(&e.prefix.addr);
	/* the prefix length is the kernel's u8, not checked against the family */
}

/*
 * mnl_nlmsg_ok() plus the check libmnl 1.0.4 gets wrong: it compares
 * (int)nlmsg_len <= len, so a length of 2^31 or more passes as negative and
 * mnl_nlmsg_next() jumps far outside the buffer. A socket receive buffer
 * never holds such a message (the kernel writes the lengths); a harness that
 * makes up its input must not hand it to the parsers. Likewise libmnl's
 * attribute walk ends at the message's aligned tail: the kernel pads every
 * message to NLMSG_ALIGNTO, so the padding must be inside the input too.
 */
static bool msg_ok(const struct nlmsghdr *nlh, int left)
{
	/* the length first: NLMSG_ALIGN of a length near 2^32 wraps to 0 */
	return mnl_nlmsg_ok(nlh, left) && nlh->nlmsg_len <= (uint32_t)left &&
	       NLMSG_ALIGN(nlh->nlmsg_len) <= (uint32_t)left;
}

static void fuzz_rtnl(const void *buf, size_t len)
{
	int left = (int)len;

	for (const struct nlmsghdr *nlh = buf; msg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left)) {
		fuzz_link(nlh);
		fuzz_fdb(nlh);
		fuzz_ifaddr(nlh);
	}
}

static void check_allowed_ips(const struct wg_peer *p)
{
	for (size_t i = 0; i < p->n_allowed_ips; i++) {
		const struct ip_prefix *ip = &p->allowed_ips[i];

		check_family(&ip->addr);
		if (ip->len > ip_addr_host_len(&ip->addr))
			__builtin_trap();
	}
}

static void check_device(const struct wg_device *dev)
{
	check_str(dev->ifname, sizeof(dev->ifname));
	if (dev->n_peers && !dev->peers)
		__builtin_trap();
	for (size_t i = 0; i < dev->n_peers; i++) {
		const struct wg_peer *p = &dev->peers[i];
		int family = p->endpoint.ss_family;

		if (p->n_allowed_ips && !p->allowed_ips)
			__builtin_trap();
		check_allowed_ips(p);
		if ((p->flags & WGPEER_HAS_ENDPOINT) && family != AF_INET && family != AF_INET6)
			__builtin_trap();
	}
}

static void fuzz_genl(const void *buf, size_t len)
{
	struct wg_device *dev = calloc(1, sizeof(*dev));
	int left = (int)len;
	int ret = 0;

	if (!dev)
		return;
	for (const struct nlmsghdr *nlh = buf; ret == 0 && msg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left))
		ret = wg_genl_parse_device(nlh, dev);
	/* a failed parse may leave a partial device: it must still be whole and freeable */
	check_device(dev);
	wg_device_free(dev);
}

static void fuzz_uapi(const uint8_t *data, size_t len)
{
	struct wg_device *dev = calloc(1, sizeof(*dev));
	char *text = malloc(len + 1);

	if (dev && text) {
		memcpy(text, data, len);
		text[len] = '\0';
		if (wg_uapi_parse_get(text, dev) == 0 &&
		    !(dev->flags & WGDEVICE_HAS_LISTEN_PORT && dev->flags & WGDEVICE_HAS_FWMARK))
			__builtin_trap();
		check_device(dev);
	}
	free(text);
	wg_device_free(dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *buf;

	if (size < 1)
		return 0;
	if (data[0] % 3 == INPUT_UAPI) {
		fuzz_uapi(data + 1, size - 1);
		return 0;
	}
	/* an exact-size, malloc-aligned copy: reads past the end are ASan errors */
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	if (data[0] % 3 == INPUT_RTNL)
		fuzz_rtnl(buf, size - 1);
	else
		fuzz_genl(buf, size - 1);
	free(buf);
	return 0;
}
