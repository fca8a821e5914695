// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_wg_genl.c - the kernel WireGuard backend without a kernel: the exact
 * bytes of WG_CMD_SET_DEVICE messages, the splitting of long changes, the
 * parsing of (split) WG_CMD_GET_DEVICE dumps, and the two-message request
 * that creates the link with its owner mark. As root, the create path also
 * runs in a private network namespace (against a kernel with or without
 * WireGuard).
 *
 * The expected messages are written by hand from the netlink layout:
 * nlmsghdr (16 bytes: len, type, flags, seq, pid), genlmsghdr (4 bytes: cmd,
 * version, reserved), then attributes {u16 len, u16 type, payload} padded
 * to 4 bytes, nests with NLA_F_NESTED (0x8000). Integers are host order
 * (this file assumes little endian), sockaddr ports and addresses network
 * order.
 */
#define _GNU_SOURCE /* unshare */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/wireguard.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/observe.h"
#include "kinds/link.h"
#include "netlink/nl.h"
#include "unit.h"
#include "wireguard/wg.h"
#include "wireguard/genl.h"

#define FAMILY 0x1b /* a made-up family id */

#define R4(x)  x, x, x, x
#define R32(x) R4(x), R4(x), R4(x), R4(x), R4(x), R4(x), R4(x), R4(x)

/* nlmsghdr: len, type FAMILY, flags REQUEST|ACK (0x0005), seq, pid 0; genl SET_DEVICE v1 */
#define HDR(len, seq)                                                                              \
	(len), 0x00, 0x00, 0x00, FAMILY, 0x00, 0x05, 0x00, (seq), 0x00, 0x00, 0x00, 0x00, 0x00,    \
	    0x00, 0x00, WG_CMD_SET_DEVICE, WG_GENL_VERSION, 0x00, 0x00
/* WGDEVICE_A_IFNAME "wgfab0\0": len 11, type 2, 7 bytes + 1 pad */
#define IFNAME 0x0b, 0x00, 0x02, 0x00, 'w', 'g', 'f', 'a', 'b', '0', 0x00, 0x00

static void set_v4(struct sockaddr_storage *ss, const char *addr, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0xee, sizeof(*ss)); /* garbage in the padding must not reach the message */
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, addr, &sin->sin_addr);
}

static void set_v6(struct sockaddr_storage *ss, const char *addr, uint16_t port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	inet_pton(AF_INET6, addr, &sin6->sin6_addr);
}

static void prefix(struct ip_prefix *p, const char *text)
{
	if (ip_prefix_parse(text, p) < 0)
		abort();
}

static void dump_diff(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len)
{
	for (size_t i = 0; i < got_len && i < want_len; i++) {
		if (got[i] != want[i]) {
			fprintf(stderr, "  first difference at byte %zu: got 0x%02x, want 0x%02x\n",
				i, got[i], want[i]);
			return;
		}
	}
	fprintf(stderr, "  lengths differ: got %zu, want %zu\n", got_len, want_len);
}

/* Encodes change in one message and compares it with want. */
static void check_bytes(const char *name, const struct wg_device *change, const uint8_t *want,
			size_t want_len)
{
	uint8_t buf[8192];
	struct wg_genl_cursor cur = {0};
	size_t len = wg_genl_encode_set(change, FAMILY, 1, 0, buf, sizeof(buf), &cur);

	CHECK_INT(len, want_len, "%s: length", name);
	CHECK(cur.done, "%s: one message is enough", name);
	CHECK_INT(cur.messages, 1, "%s", name);
	if (len == want_len && !memcmp(buf, want, len)) {
		unit_passed++;
	} else {
		unit_failed++;
		fprintf(stderr, "FAIL %s: bytes differ\n", name);
		dump_diff(buf, len, want, want_len);
	}
	CHECK_INT(wg_genl_encode_set(change, FAMILY, 2, 0, buf, sizeof(buf), &cur), 0,
		  "%s: nothing after done", name);
}

static void test_set_device(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    HDR(76, 1),
	    IFNAME,
	    /* WGDEVICE_A_PRIVATE_KEY: len 36, type 3 */
	    0x24, 0x00, 0x03, 0x00, R32(0x11),
	    /* WGDEVICE_A_LISTEN_PORT: len 6, type 6, u16 51820 (0xca6c) + 2 pad */
	    0x06, 0x00, 0x06, 0x00, 0x6c, 0xca, 0x00, 0x00,
	};
	/* clang-format on */
	struct wg_device dev = {.ifname = "wgfab0",
				.flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT,
				.listen_port = 51820};

	memset(dev.private_key, 0x11, sizeof(dev.private_key));
	check_bytes("set device", &dev, want, sizeof(want));
}

static void test_peer_add_v4(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    HDR(144, 1),
	    IFNAME,
	    /* WGDEVICE_A_PEERS | NLA_F_NESTED: len 112 */
	    0x70, 0x00, 0x08, 0x80,
	    /* peer entry, type 0 | NLA_F_NESTED: len 108 */
	    0x6c, 0x00, 0x00, 0x80,
	    /* WGPEER_A_PUBLIC_KEY: len 36, type 1 */
	    0x24, 0x00, 0x01, 0x00, R32(0x22),
	    /* WGPEER_A_ENDPOINT: len 20, type 4, sockaddr_in {AF_INET, 51820, 192.0.2.12, zero} */
	    0x14, 0x00, 0x04, 0x00, 0x02, 0x00, 0xca, 0x6c, 192, 0, 2, 12, R4(0x00), R4(0x00),
	    /* WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL: len 6, type 5, u16 25 + pad */
	    0x06, 0x00, 0x05, 0x00, 0x19, 0x00, 0x00, 0x00,
	    /* WGPEER_A_FLAGS: len 8, type 3, REPLACE_ALLOWEDIPS */
	    0x08, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x00,
	    /* WGPEER_A_ALLOWEDIPS | NLA_F_NESTED: len 32 */
	    0x20, 0x00, 0x09, 0x80,
	    /* entry | NLA_F_NESTED: len 28 */
	    0x1c, 0x00, 0x00, 0x80,
	    /* WGALLOWEDIP_A_FAMILY: len 6, type 1, AF_INET + pad */
	    0x06, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00,
	    /* WGALLOWEDIP_A_IPADDR: len 8, type 2, 10.255.0.2 */
	    0x08, 0x00, 0x02, 0x00, 10, 255, 0, 2,
	    /* WGALLOWEDIP_A_CIDR_MASK: len 5, type 3, 32 + pad */
	    0x05, 0x00, 0x03, 0x00, 0x20, 0x00, 0x00, 0x00,
	};
	/* clang-format on */
	struct ip_prefix ip;
	struct wg_peer peer = {.keepalive = 25,
			       .n_allowed_ips = 1,
			       .allowed_ips = &ip,
			       .flags = WGPEER_HAS_ENDPOINT | WGPEER_HAS_KEEPALIVE |
					WGPEER_REPLACE_ALLOWEDIPS};
	struct wg_device dev = {.ifname = "wgfab0", .n_peers = 1, .peers = &peer};

	memset(peer.public_key, 0x22, sizeof(peer.public_key));
	set_v4(&peer.endpoint, "192.0.2.12", 51820);
	prefix(&ip, "10.255.0.2/32");
	check_bytes("peer add v4", &dev, want, sizeof(want));
}

static void test_peer_add_v6(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    HDR(188, 1),
	    IFNAME,
	    /* WGDEVICE_A_PEERS: len 156 */
	    0x9c, 0x00, 0x08, 0x80,
	    /* peer entry: len 152 */
	    0x98, 0x00, 0x00, 0x80,
	    /* WGPEER_A_PUBLIC_KEY */
	    0x24, 0x00, 0x01, 0x00, R32(0x33),
	    /* WGPEER_A_PRESHARED_KEY: len 36, type 2 */
	    0x24, 0x00, 0x02, 0x00, R32(0x44),
	    /* WGPEER_A_ENDPOINT: len 32, sockaddr_in6 {AF_INET6 (10), 51821, flowinfo 0,
	       2001:db8::12, scope 0} */
	    0x20, 0x00, 0x04, 0x00, 0x0a, 0x00, 0xca, 0x6d, R4(0x00),
	    0x20, 0x01, 0x0d, 0xb8, R4(0x00), R4(0x00), 0x00, 0x00, 0x00, 0x12,
	    R4(0x00),
	    /* WGPEER_A_ALLOWEDIPS: len 44 */
	    0x2c, 0x00, 0x09, 0x80,
	    /* entry: len 40 */
	    0x28, 0x00, 0x00, 0x80,
	    /* family AF_INET6 */
	    0x06, 0x00, 0x01, 0x00, 0x0a, 0x00, 0x00, 0x00,
	    /* address fd00::2: len 20 */
	    0x14, 0x00, 0x02, 0x00, 0xfd, 0x00, 0x00, 0x00, R4(0x00), R4(0x00), 0x00, 0x00, 0x00, 0x02,
	    /* cidr 128 */
	    0x05, 0x00, 0x03, 0x00, 0x80, 0x00, 0x00, 0x00,
	};
	/* clang-format on */
	struct ip_prefix ip;
	struct wg_peer peer = {.n_allowed_ips = 1,
			       .allowed_ips = &ip,
			       .flags = WGPEER_HAS_ENDPOINT | WGPEER_HAS_PRESHARED_KEY};
	struct wg_device dev = {.ifname = "wgfab0", .n_peers = 1, .peers = &peer};

	memset(peer.public_key, 0x33, sizeof(peer.public_key));
	memset(peer.preshared_key, 0x44, sizeof(peer.preshared_key));
	set_v6(&peer.endpoint, "2001:db8::12", 51821);
	prefix(&ip, "fd00::2/128");
	check_bytes("peer add v6", &dev, want, sizeof(want));
}

static void test_peer_change(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    HDR(104, 1),
	    IFNAME,
	    /* WGDEVICE_A_PEERS: len 72 */
	    0x48, 0x00, 0x08, 0x80,
	    /* peer entry: len 68 */
	    0x44, 0x00, 0x00, 0x80,
	    0x24, 0x00, 0x01, 0x00, R32(0x55),
	    /* endpoint 198.51.100.7:51820 */
	    0x14, 0x00, 0x04, 0x00, 0x02, 0x00, 0xca, 0x6c, 198, 51, 100, 7, R4(0x00), R4(0x00),
	    /* WGPEER_A_FLAGS: UPDATE_ONLY */
	    0x08, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x00,
	};
	/* clang-format on */
	struct wg_peer peer = {.flags = WGPEER_HAS_ENDPOINT | WGPEER_UPDATE_ONLY};
	struct wg_device dev = {.ifname = "wgfab0", .n_peers = 1, .peers = &peer};

	memset(peer.public_key, 0x55, sizeof(peer.public_key));
	set_v4(&peer.endpoint, "198.51.100.7", 51820);
	check_bytes("peer change", &dev, want, sizeof(want));
}

static void test_peer_remove(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    HDR(84, 1),
	    IFNAME,
	    /* WGDEVICE_A_PEERS: len 52 */
	    0x34, 0x00, 0x08, 0x80,
	    /* peer entry: len 48 */
	    0x30, 0x00, 0x00, 0x80,
	    0x24, 0x00, 0x01, 0x00, R32(0x66),
	    /* WGPEER_A_FLAGS: REMOVE_ME, and nothing else of the peer */
	    0x08, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,
	};
	/* clang-format on */
	struct ip_prefix ip;
	struct wg_peer peer = {.flags = WGPEER_REMOVE_ME | WGPEER_HAS_KEEPALIVE |
					WGPEER_REPLACE_ALLOWEDIPS,
			       .keepalive = 25,
			       .n_allowed_ips = 1,
			       .allowed_ips = &ip};
	struct wg_device dev = {.ifname = "wgfab0", .n_peers = 1, .peers = &peer};

	memset(peer.public_key, 0x66, sizeof(peer.public_key));
	prefix(&ip, "10.255.0.9/32");
	check_bytes("peer remove", &dev, want, sizeof(want));
}

/* A pass's changes in one message: device settings, a peer added, one removed. */
static void test_multi_peer(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    HDR(236, 1),
	    IFNAME,
	    0x24, 0x00, 0x03, 0x00, R32(0x11),			/* WGDEVICE_A_PRIVATE_KEY */
	    0x06, 0x00, 0x06, 0x00, 0x6c, 0xca, 0x00, 0x00,	/* WGDEVICE_A_LISTEN_PORT */
	    /* WGDEVICE_A_PEERS: len 160 = 4 + 108 + 48 */
	    0xa0, 0x00, 0x08, 0x80,
	    /* the added peer, as in "peer add v4" */
	    0x6c, 0x00, 0x00, 0x80,
	    0x24, 0x00, 0x01, 0x00, R32(0x22),
	    0x14, 0x00, 0x04, 0x00, 0x02, 0x00, 0xca, 0x6c, 192, 0, 2, 12, R4(0x00), R4(0x00),
	    0x06, 0x00, 0x05, 0x00, 0x19, 0x00, 0x00, 0x00,
	    0x08, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x00,
	    0x20, 0x00, 0x09, 0x80,
	    0x1c, 0x00, 0x00, 0x80,
	    0x06, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00,
	    0x08, 0x00, 0x02, 0x00, 10, 255, 0, 2,
	    0x05, 0x00, 0x03, 0x00, 0x20, 0x00, 0x00, 0x00,
	    /* the removed peer, as in "peer remove" */
	    0x30, 0x00, 0x00, 0x80,
	    0x24, 0x00, 0x01, 0x00, R32(0x66),
	    0x08, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,
	};
	/* clang-format on */
	struct ip_prefix ip;
	struct wg_peer peers[2] = {
	    {.keepalive = 25,
	     .n_allowed_ips = 1,
	     .allowed_ips = &ip,
	     .flags = WGPEER_HAS_ENDPOINT | WGPEER_HAS_KEEPALIVE | WGPEER_REPLACE_ALLOWEDIPS},
	    {.flags = WGPEER_REMOVE_ME},
	};
	struct wg_device dev = {.ifname = "wgfab0",
				.flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT,
				.listen_port = 51820,
				.n_peers = 2,
				.peers = peers};

	memset(dev.private_key, 0x11, sizeof(dev.private_key));
	memset(peers[0].public_key, 0x22, WG_KEY_LEN);
	memset(peers[1].public_key, 0x66, WG_KEY_LEN);
	set_v4(&peers[0].endpoint, "192.0.2.12", 51820);
	prefix(&ip, "10.255.0.2/32");
	check_bytes("device and two peers", &dev, want, sizeof(want));
}

/* What one peer entry of an encoded message held. */
struct seen_peer {
	uint8_t key0;
	uint32_t flags;
	bool endpoint, keepalive, psk;
	size_t n_ips;
};

/* Walks one SET message: checks device attributes and records its peer entries. */
static int walk_message(const struct nlmsghdr *nlh, unsigned int index, struct seen_peer *seen,
			size_t max)
{
	const struct nlattr *attr, *peer, *pa;
	size_t n = 0;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
	{
		int type = mnl_attr_get_type(attr);

		CHECK(type != WGDEVICE_A_FLAGS, "message %u carries WGDEVICE_A_FLAGS", index);
		if (type == WGDEVICE_A_PRIVATE_KEY || type == WGDEVICE_A_LISTEN_PORT)
			CHECK_INT(index, 0, "device attributes only in the first message");
		if (type != WGDEVICE_A_PEERS)
			continue;
		CHECK(attr->nla_type & NLA_F_NESTED, "peers nest flagged");
		mnl_attr_for_each_nested(peer, attr)
		{
			struct seen_peer *s = &seen[n < max ? n : max - 1];

			memset(s, 0, sizeof(*s));
			mnl_attr_for_each_nested(pa, peer)
			{
				switch (mnl_attr_get_type(pa)) {
				case WGPEER_A_PUBLIC_KEY:
					s->key0 = *(const uint8_t *)mnl_attr_get_payload(pa);
					break;
				case WGPEER_A_FLAGS:
					s->flags = mnl_attr_get_u32(pa);
					break;
				case WGPEER_A_ENDPOINT:
					s->endpoint = true;
					break;
				case WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL:
					s->keepalive = true;
					break;
				case WGPEER_A_PRESHARED_KEY:
					s->psk = true;
					break;
				case WGPEER_A_ALLOWEDIPS: {
					const struct nlattr *ip;

					mnl_attr_for_each_nested(ip, pa)
					{
						s->n_ips++;
					}
					break;
				}
				}
			}
			n++;
		}
	}
	return (int)n;
}

/* The size of one peer of test_many_peers in a message (as "peer add v4"). */
#define PEER_ENTRY 108
#define MANY_PEERS 200

/*
 * Many peers: packed into as few messages as hold them, each peer whole in
 * one of them, in order; a message ends only when the next peer would not fit.
 */
static void test_many_peers(size_t buflen)
{
	struct wg_peer *peers = calloc(MANY_PEERS, sizeof(*peers));
	struct ip_prefix *ips = calloc(MANY_PEERS, sizeof(*ips));
	struct wg_device dev = {.ifname = "wgfab0",
				.flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT,
				.listen_port = 51820,
				.n_peers = MANY_PEERS,
				.peers = peers};
	/* header, genl header and ifname (32), the peers nest (4); the device's 44 in the first */
	size_t first_fit = (buflen - 32 - 44 - 4) / PEER_ENTRY,
	       fit = (buflen - 32 - 4) / PEER_ENTRY;
	size_t want = 1 + (MANY_PEERS - first_fit + fit - 1) / fit, next = 0;
	struct wg_genl_cursor cur = {0};
	uint8_t *buf = malloc(buflen);
	unsigned int messages = 0;
	char name[64];

	snprintf(name, sizeof(name), "%d peers in %zu-byte messages", MANY_PEERS, buflen);
	for (size_t i = 0; i < MANY_PEERS; i++) {
		peers[i].keepalive = 25;
		peers[i].n_allowed_ips = 1;
		peers[i].allowed_ips = &ips[i];
		peers[i].flags =
		    WGPEER_HAS_ENDPOINT | WGPEER_HAS_KEEPALIVE | WGPEER_REPLACE_ALLOWEDIPS;
		memset(peers[i].public_key, (int)i, WG_KEY_LEN);
		set_v4(&peers[i].endpoint, "192.0.2.12", 51820);
		prefix(&ips[i], "10.255.0.2/32");
	}
	while (!cur.done && messages < 100) {
		struct seen_peer seen[MANY_PEERS];
		size_t len = wg_genl_encode_set(&dev, FAMILY, messages + 1, 0, buf, buflen, &cur);
		int n;

		if (!len) {
			CHECK(len, "%s: encoder stopped: %d", name, cur.error);
			break;
		}
		n = walk_message((const struct nlmsghdr *)buf, messages, seen, MANY_PEERS);
		for (int i = 0; i < n; i++, next++) {
			CHECK_INT(seen[i].key0, (uint8_t)next, "%s: peer order", name);
			CHECK_INT(seen[i].n_ips, 1, "%s: whole peer", name);
		}
		if (!cur.done)
			CHECK(len + PEER_ENTRY > buflen,
			      "%s: message %u ends with room (%zu bytes)", name, messages, len);
		messages++;
	}
	CHECK(cur.done, "%s: finished", name);
	CHECK_INT(next, MANY_PEERS, "%s: every peer once", name);
	CHECK_INT(messages, want, "%s: messages", name);
	free(buf);
	free(ips);
	free(peers);
}

#define BIG_IPS 2000

/* A change whose allowed IPs cannot fit one message, encoded into buffers of buflen. */
static void test_split(size_t buflen)
{
	struct ip_prefix *big = calloc(BIG_IPS, sizeof(*big)), small[10], gone;
	struct wg_peer peers[3] = {
	    {.n_allowed_ips = BIG_IPS,
	     .allowed_ips = big,
	     .keepalive = 25,
	     .flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_HAS_KEEPALIVE | WGPEER_HAS_ENDPOINT |
		      WGPEER_HAS_PRESHARED_KEY},
	    {.flags = WGPEER_REMOVE_ME, .n_allowed_ips = 1, .allowed_ips = &gone},
	    {.n_allowed_ips = 10, .allowed_ips = small, .flags = WGPEER_REPLACE_ALLOWEDIPS},
	};
	struct wg_device dev = {.ifname = "wgfab0",
				.flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT,
				.listen_port = 51820,
				.n_peers = 3,
				.peers = peers};
	struct wg_device *decoded = calloc(1, sizeof(*decoded));
	uint8_t *buf = malloc(buflen);
	struct wg_genl_cursor cur = {0};
	size_t first_parts[3] = {0}, ips_seen[3] = {0};
	unsigned int messages = 0;
	char name[64];

	snprintf(name, sizeof(name), "split into %zu-byte messages", buflen);
	for (int i = 0; i < BIG_IPS; i++) {
		big[i].addr.family = AF_INET;
		big[i].addr.bytes[0] = 10;
		big[i].addr.bytes[1] = (uint8_t)(i >> 8);
		big[i].addr.bytes[2] = (uint8_t)i;
		big[i].len = 32;
	}
	for (int i = 0; i < 10; i++)
		prefix(&small[i], i % 2 ? "fd00::/64" : "192.0.2.0/24");
	prefix(&gone, "10.9.9.9/32");
	for (int i = 0; i < 3; i++)
		memset(peers[i].public_key, 0xa0 + i, WG_KEY_LEN);
	set_v4(&peers[0].endpoint, "192.0.2.1", 51820);

	while (!cur.done && messages < 1000) {
		struct seen_peer seen[16];
		size_t len = wg_genl_encode_set(&dev, FAMILY, messages + 1, 0, buf, buflen, &cur);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		int n;

		if (!len) {
			CHECK(len, "%s: encoder stopped: %d", name, cur.error);
			break;
		}
		CHECK(len <= buflen, "%s: message %u is %zu bytes", name, messages, len);
		CHECK_INT(nlh->nlmsg_len, len, "%s: nlmsg_len", name);
		CHECK_INT(nlh->nlmsg_seq, messages + 1, "%s: seq", name);
		n = walk_message(nlh, messages, seen, 16);
		CHECK(n > 0 || messages == 0, "%s: message %u has no peer", name, messages);
		for (int i = 0; i < n; i++) {
			int p = seen[i].key0 - 0xa0;
			bool cont;

			CHECK(p >= 0 && p < 3, "%s: unknown peer", name);
			if (p < 0 || p > 2)
				continue;
			cont = first_parts[p] > 0;
			first_parts[p]++;
			ips_seen[p] += seen[i].n_ips;
			if (!cont) {
				CHECK_INT(seen[i].flags & WGPEER_F_REPLACE_ALLOWEDIPS,
					  p == 1 ? 0 : WGPEER_F_REPLACE_ALLOWEDIPS,
					  "%s: first part of peer %d", name, p);
				CHECK_INT(seen[i].endpoint, p == 0, "%s: peer %d endpoint", name,
					  p);
			} else {
				/* a continued peer must not drop what its first part added */
				CHECK_INT(seen[i].flags, WGPEER_F_UPDATE_ONLY,
					  "%s: continued peer %d, message %u", name, p, messages);
				CHECK(!seen[i].endpoint && !seen[i].keepalive && !seen[i].psk,
				      "%s: continued peer %d repeats settings", name, p);
				CHECK(seen[i].n_ips > 0, "%s: empty continuation", name);
			}
		}
		CHECK_INT(wg_genl_parse_device(nlh, decoded), 0, "%s: decode", name);
		messages++;
	}
	CHECK(cur.done, "%s: finished", name);
	CHECK(messages > 1, "%s: split (%u messages)", name, messages);
	CHECK_INT(first_parts[1], 1, "%s: removed peer sent once", name);
	CHECK_INT(ips_seen[0], BIG_IPS, "%s: peer 0 allowed IPs", name);
	CHECK_INT(ips_seen[1], 0, "%s: a removed peer carries no allowed IPs", name);
	CHECK_INT(ips_seen[2], 10, "%s: peer 2 allowed IPs", name);
	/* decoded and coalesced: every allowed IP once, in order, under the right peer */
	CHECK_INT(decoded->n_peers, 3, "%s: peers after coalescing", name);
	if (decoded->n_peers == 3) {
		bool in_order = decoded->peers[0].n_allowed_ips == BIG_IPS;

		for (size_t i = 0; in_order && i < BIG_IPS; i++)
			in_order =
			    !memcmp(&decoded->peers[0].allowed_ips[i], &big[i], sizeof(big[i]));
		CHECK(in_order, "%s: peer 0 has all %d allowed IPs in order", name, BIG_IPS);
		CHECK_INT(decoded->peers[1].n_allowed_ips, 0, "%s", name);
		CHECK(decoded->peers[2].n_allowed_ips == 10 &&
			  !memcmp(decoded->peers[2].allowed_ips, small, sizeof(small)),
		      "%s: peer 2 allowed IPs", name);
		for (int i = 0; i < 3; i++)
			CHECK_INT(decoded->peers[i].public_key[0], 0xa0 + i, "%s: order", name);
	}
	wg_device_free(decoded);
	free(buf);
	free(big);
}

static void test_too_small(void)
{
	uint8_t buf[64];
	struct wg_genl_cursor cur = {0};
	struct wg_peer peer = {.flags = WGPEER_HAS_KEEPALIVE};
	struct wg_device dev = {.ifname = "wgfab0", .n_peers = 1, .peers = &peer};
	struct ip_prefix bad = {.addr = {.family = 0}, .len = 8};

	/* the first message (ifname only) fits; the peer never does */
	CHECK(wg_genl_encode_set(&dev, FAMILY, 1, 0, buf, sizeof(buf), &cur) > 0, "first");
	CHECK_INT(wg_genl_encode_set(&dev, FAMILY, 2, 0, buf, sizeof(buf), &cur), 0, "no room");
	CHECK_INT(cur.error, -EMSGSIZE, "error says why");
	CHECK(!cur.done, "not done");
	memset(&cur, 0, sizeof(cur));
	CHECK_INT(wg_genl_encode_set(&dev, FAMILY, 1, 0, buf, 16, &cur), 0, "no header room");
	{
		uint8_t big[512];

		memset(&cur, 0, sizeof(cur));
		peer.n_allowed_ips = 1;
		peer.allowed_ips = &bad;
		CHECK_INT(wg_genl_encode_set(&dev, FAMILY, 1, 0, big, sizeof(big), &cur), 0,
			  "bad family");
		CHECK_INT(cur.error, -EINVAL, "malformed allowed IP");
	}
}

static void test_encode_get(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    /* len 32, FAMILY, REQUEST|DUMP (0x0301), seq 7, pid 0; GET_DEVICE v1 */
	    0x20, 0x00, 0x00, 0x00, FAMILY, 0x00, 0x01, 0x03, 0x07, 0x00, 0x00, 0x00, R4(0x00),
	    WG_CMD_GET_DEVICE, WG_GENL_VERSION, 0x00, 0x00,
	    IFNAME,
	};
	/* clang-format on */
	uint8_t buf[128];
	size_t len = wg_genl_encode_get("wgfab0", FAMILY, 7, 0, buf, sizeof(buf));

	CHECK_INT(len, sizeof(want), "get request length");
	CHECK(len == sizeof(want) && !memcmp(buf, want, len), "get request bytes");
}

/* ---- creating the link: RTM_NEWLINK and its owner mark, one buffer ---- */

static void test_encode_create(void)
{
	/* clang-format off */
	static const uint8_t want[] = {
	    /* len 64, RTM_NEWLINK (16), REQUEST|ACK|EXCL|CREATE (0x0605), seq 7, pid 0 */
	    0x40, 0x00, 0x00, 0x00, 0x10, 0x00, 0x05, 0x06, 0x07, 0x00, 0x00, 0x00, R4(0x00),
	    /* ifinfomsg: AF_UNSPEC, no index, no flags */
	    R4(0x00), R4(0x00), R4(0x00), R4(0x00),
	    /* IFLA_IFNAME (3) "wgfab0\0": len 11 + 1 pad */
	    0x0b, 0x00, 0x03, 0x00, 'w', 'g', 'f', 'a', 'b', '0', 0x00, 0x00,
	    /* IFLA_LINKINFO (18) | NLA_F_NESTED: len 20 */
	    0x14, 0x00, 0x12, 0x80,
	    /* IFLA_INFO_KIND (1) "wireguard\0": len 14 + 2 pad */
	    0x0e, 0x00, 0x01, 0x00, 'w', 'i', 'r', 'e', 'g', 'u', 'a', 'r', 'd', 0x00, 0x00, 0x00,
	    /* len 64, RTM_NEWLINK, REQUEST|ACK only (0x0005): the link must exist, seq 8 */
	    0x40, 0x00, 0x00, 0x00, 0x10, 0x00, 0x05, 0x00, 0x08, 0x00, 0x00, 0x00, R4(0x00),
	    R4(0x00), R4(0x00), R4(0x00), R4(0x00),
	    0x0b, 0x00, 0x03, 0x00, 'w', 'g', 'f', 'a', 'b', '0', 0x00, 0x00,
	    /* IFLA_IFALIAS (20) "fabricd:test\0": len 17 + 3 pad */
	    0x11, 0x00, 0x14, 0x00, 'f', 'a', 'b', 'r', 'i', 'c', 'd', ':', 't', 'e', 's', 't',
	    0x00, 0x00, 0x00, 0x00,
	};
	/* clang-format on */
	uint8_t buf[1024];
	char alias[WG_ALIAS_MAX + 2];
	size_t len = wg_genl_encode_create("wgfab0", "fabricd:test", 7, 0, buf, sizeof(buf));
	bool untouched = true;

	CHECK_INT(len, sizeof(want), "create request length");
	if (len == sizeof(want) && !memcmp(buf, want, len)) {
		unit_passed++;
	} else {
		unit_failed++;
		fprintf(stderr, "FAIL create request: bytes differ\n");
		dump_diff(buf, len, want, sizeof(want));
	}
	/* every shorter buffer is refused, and nothing is written past its end */
	for (size_t n = 0; n < sizeof(want); n++) {
		memset(buf, 0xa5, sizeof(buf));
		CHECK_INT(wg_genl_encode_create("wgfab0", "fabricd:test", 7, 0, buf, n), 0,
			  "buflen %zu", n);
		for (size_t i = n; i < sizeof(buf); i++)
			untouched = untouched && buf[i] == 0xa5;
	}
	CHECK(untouched, "nothing written past buflen");
	CHECK_INT(wg_genl_encode_create("wgfab0", "fabricd:test", 7, 0, buf, sizeof(want)),
		  sizeof(want), "exactly enough room");
	/* the alias: not empty, and what the kernel stores with its NUL */
	CHECK_INT(wg_genl_encode_create("wgfab0", "", 1, 0, buf, sizeof(buf)), 0, "empty alias");
	CHECK_INT(wg_genl_encode_create("wgfab0", NULL, 1, 0, buf, sizeof(buf)), 0, "no alias");
	memset(alias, 'a', sizeof(alias));
	alias[WG_ALIAS_MAX] = '\0';
	/* 64 + 16 + 16 + 12 + (4 + 255, padded to 260) */
	CHECK_INT(wg_genl_encode_create("wgfab0", alias, 1, 0, buf, sizeof(buf)), 368,
		  "longest alias");
	alias[WG_ALIAS_MAX] = 'a';
	alias[WG_ALIAS_MAX + 1] = '\0';
	CHECK_INT(wg_genl_encode_create("wgfab0", alias, 1, 0, buf, sizeof(buf)), 0,
		  "alias too long");
}

/* A copy of link name as the kernel reports it into *out; whether it exists. */
static bool find_link(const char *name, struct link_obs *out)
{
	struct link_table t = {0};
	const struct link_obs *l = NULL;
	struct nl_sock s;

	memset(out, 0, sizeof(*out));
	if (nl_open(&s, NETLINK_ROUTE) == 0 && link_dump(&s, &t) == 0)
		l = link_find(&t, name);
	if (l) {
		static char alias[LINK_ALIAS_MAX];

		*out = *l;
		/* the table's copy goes with it */
		snprintf(alias, sizeof(alias), "%s", link_alias(l));
		out->alias = alias;
	}
	link_table_free(&t);
	nl_close(&s);
	return l != NULL;
}

/* As root, in a network namespace of its own: create, refuse, remove. */
static void test_create_live(void)
{
	struct link_obs l;
	int ret;

	if (unshare(CLONE_NEWNET) < 0) {
		CHECK(0, "cannot unshare the network namespace");
		return;
	}
	CHECK(!wg_started_by_fabricd(WG_BACKEND_KERNEL, "wgfab0"), "kernel: never 'started'");
	CHECK_INT(wg_create(WG_BACKEND_KERNEL, "wgfab0", ""), -EINVAL, "empty owner mark");
	CHECK(!find_link("wgfab0", &l), "nothing made");

	/* a foreign link of that name: refused, and its alias is left alone */
	if (system("ip link add wgfab0 type bridge && ip link set wgfab0 alias foreign") != 0) {
		CHECK(0, "cannot make a bridge with ip");
	} else {
		ret = wg_create(WG_BACKEND_KERNEL, "wgfab0", "fabricd:test");
		CHECK_INT(ret, -EEXIST, "foreign link: %s", wg_last_error());
		CHECK(find_link("wgfab0", &l), "still there");
		CHECK_STR(l.alias, "foreign", "its alias is untouched");
		CHECK_STR(l.kind, "bridge", "its kind");
		CHECK(system("ip link del wgfab0") == 0, "remove the bridge");
	}

	ret = wg_create(WG_BACKEND_KERNEL, "wgfab0", "fabricd:test");
	if (ret == -EPROTONOSUPPORT) {
		/* both messages failed (no such kind, then no such device): nothing is left */
		CHECK(strstr(wg_last_error(), "this kernel has no WireGuard") != NULL, "%s",
		      wg_last_error());
		CHECK(!find_link("wgfab0", &l), "no kernel WireGuard: no link left");
		printf("test_wg_genl: this kernel has no WireGuard: create checked for failure\n");
		return;
	}
	CHECK_INT(ret, 0, "create: %s", wg_last_error());
	CHECK(find_link("wgfab0", &l), "created");
	CHECK_STR(l.kind, "wireguard", "kind");
	CHECK_STR(l.alias, "fabricd:test", "marked in the same sendmsg");
	CHECK(wg_exists(WG_BACKEND_KERNEL, "wgfab0"), "exists");
	CHECK_INT(wg_create(WG_BACKEND_KERNEL, "wgfab0", "fabricd:other"), -EEXIST, "twice");
	find_link("wgfab0", &l);
	CHECK_STR(l.alias, "fabricd:test", "a second create leaves the mark alone");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_KERNEL, "wgfab0"), "kernel: still false");
	CHECK_INT(wg_destroy(WG_BACKEND_KERNEL, "wgfab0"), 0, "destroy: %s", wg_last_error());
	CHECK(!find_link("wgfab0", &l), "removed");
}

/*
 * As root, in the namespace test_create_live made: the process's rtnetlink
 * and generic netlink sockets are opened once however often they are used,
 * and anew after a failed send or receive (EBADF here).
 */
static void test_shared_sockets_live(void)
{
	struct nl_sock *s = nl_route_shared();
	unsigned int opened = nl_route_shared_opened(), g_opened, g_resolved, g1, r1;
	struct link_table t = {0};
	bool wg = wg_genl_available();

	CHECK(s != NULL, "rtnetlink socket: %s", strerror(errno));
	if (!s)
		return;
	wg_genl_counts(&g_opened, &g_resolved);
	for (int i = 0; i < 5; i++) {
		CHECK(!wg_exists(WG_BACKEND_KERNEL, "wgfab9"), "no such device");
		CHECK_INT(wg_genl_available(), wg, "the family answers the same");
		CHECK(nl_route_shared() == s, "the same socket");
	}
	wg_genl_counts(&g1, &r1);
	CHECK_INT(nl_route_shared_opened(), opened, "rtnetlink: no socket opened");
	CHECK_INT(g1, g_opened, "generic netlink: no socket opened");
	/* without the module the family is asked for each time (it may be loaded later) */
	if (wg)
		CHECK_INT(r1, g_resolved, "the family id resolved once");

	/* a stale family id (wireguard unloaded and loaded again): ENOENT, looked up anew */
	{
		struct wg_device change = {.ifname = "wgfab9", .flags = WGDEVICE_HAS_LISTEN_PORT};
		struct wg_device *dev = NULL;
		int ret;

		wg_genl_test_family(0x7ff0);
		ret = wg_get(WG_BACKEND_KERNEL, "wgfab9", &dev);
		wg_genl_counts(&g1, &r1);
		CHECK_INT(ret, wg ? -ENODEV : -EPROTONOSUPPORT, "stale family id: %s",
			  wg_last_error());
		CHECK_INT(g1, g_opened, "stale family id: the same socket");
		if (wg)
			CHECK_INT(r1, g_resolved + 1, "stale family id: resolved again");
		wg_device_free(dev);

		/* the same for a change: none of it ran, so it is sent again under the new id */
		wg_genl_test_family(0x7ff0);
		ret = wg_set(WG_BACKEND_KERNEL, &change);
		CHECK_INT(ret, wg ? -ENODEV : -EPROTONOSUPPORT, "stale family id, set: %s",
			  wg_last_error());
	}

	/* the descriptor goes bad under the socket: the failure marks it, the next use reopens */
	close(mnl_socket_get_fd(s->mnl));
	CHECK(!wg_exists(WG_BACKEND_KERNEL, "wgfab9"), "bad descriptor: nothing found");
	CHECK(s->broken, "a failed send marks the socket");
	CHECK(nl_route_shared() == s, "reopened in place");
	CHECK_INT(nl_route_shared_opened(), opened + 1, "one new socket");
	CHECK(!s->broken, "the new one is sound");
	CHECK_INT(link_dump(s, &t), 0, "the new socket works");
	CHECK(link_find(&t, "lo") != NULL, "it sees lo");
	link_table_free(&t);
}

/* ---- dumps: built the way the kernel's wg_get_device_dump() lays them out ---- */

static void put_ip4(struct nlmsghdr *nlh, uint8_t last, uint8_t cidr)
{
	struct nlattr *e = mnl_attr_nest_start(nlh, 0);
	uint8_t a[4] = {10, 0, 0, last};

	mnl_attr_put_u16(nlh, WGALLOWEDIP_A_FAMILY, AF_INET);
	mnl_attr_put(nlh, WGALLOWEDIP_A_IPADDR, 4, a);
	mnl_attr_put_u8(nlh, WGALLOWEDIP_A_CIDR_MASK, cidr);
	mnl_attr_nest_end(nlh, e);
}

static struct nlmsghdr *dump_start(void *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	nlh->nlmsg_type = FAMILY;
	nlh->nlmsg_flags = NLM_F_MULTI;
	g->cmd = WG_CMD_GET_DEVICE;
	g->version = 1;
	return nlh;
}

static void test_parse_dump(void)
{
	uint8_t buf1[2048], buf2[2048], key[32];
	struct nlmsghdr *m1 = dump_start(buf1), *m2 = dump_start(buf2);
	struct nlattr *peers, *peer, *ips;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(51820)};
	struct {
		int64_t sec, nsec;
	} hs = {1700000000, 123};
	struct wg_device *dev = calloc(1, sizeof(*dev));

	/* message 1: device, peer A whole, peer B's first part */
	mnl_attr_put_u32(m1, WGDEVICE_A_IFINDEX, 7);
	mnl_attr_put_strz(m1, WGDEVICE_A_IFNAME, "wgfab0");
	memset(key, 0x11, 32);
	mnl_attr_put(m1, WGDEVICE_A_PRIVATE_KEY, 32, key);
	memset(key, 0x12, 32);
	mnl_attr_put(m1, WGDEVICE_A_PUBLIC_KEY, 32, key);
	mnl_attr_put_u16(m1, WGDEVICE_A_LISTEN_PORT, 51820);
	mnl_attr_put_u32(m1, WGDEVICE_A_FWMARK, 0);
	mnl_attr_put_u32(m1, 99, 0); /* unknown: ignored */
	peers = mnl_attr_nest_start(m1, WGDEVICE_A_PEERS);
	peer = mnl_attr_nest_start(m1, 0);
	memset(key, 0xaa, 32);
	mnl_attr_put(m1, WGPEER_A_PUBLIC_KEY, 32, key);
	memset(key, 0, 32);
	mnl_attr_put(m1, WGPEER_A_PRESHARED_KEY, 32, key); /* zero: no preshared key */
	inet_pton(AF_INET, "192.0.2.12", &sin.sin_addr);
	mnl_attr_put(m1, WGPEER_A_ENDPOINT, sizeof(sin), &sin);
	mnl_attr_put_u16(m1, WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL, 25);
	mnl_attr_put(m1, WGPEER_A_LAST_HANDSHAKE_TIME, sizeof(hs), &hs);
	mnl_attr_put_u64(m1, WGPEER_A_RX_BYTES, 1000);
	mnl_attr_put_u64(m1, WGPEER_A_TX_BYTES, 2000);
	mnl_attr_put_u32(m1, WGPEER_A_PROTOCOL_VERSION, 1);
	ips = mnl_attr_nest_start(m1, WGPEER_A_ALLOWEDIPS);
	put_ip4(m1, 1, 32);
	put_ip4(m1, 2, 32);
	mnl_attr_nest_end(m1, ips);
	mnl_attr_nest_end(m1, peer);
	peer = mnl_attr_nest_start(m1, 0);
	memset(key, 0xbb, 32);
	mnl_attr_put(m1, WGPEER_A_PUBLIC_KEY, 32, key);
	memset(key, 0x77, 32);
	mnl_attr_put(m1, WGPEER_A_PRESHARED_KEY, 32, key);
	mnl_attr_put_u16(m1, WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL, 0);
	ips = mnl_attr_nest_start(m1, WGPEER_A_ALLOWEDIPS);
	put_ip4(m1, 3, 32);
	mnl_attr_nest_end(m1, ips);
	mnl_attr_nest_end(m1, peer);
	mnl_attr_nest_end(m1, peers);

	/* message 2: the rest of peer B (key and allowed IPs only), then peer C */
	peers = mnl_attr_nest_start(m2, WGDEVICE_A_PEERS);
	peer = mnl_attr_nest_start(m2, 0);
	memset(key, 0xbb, 32);
	mnl_attr_put(m2, WGPEER_A_PUBLIC_KEY, 32, key);
	ips = mnl_attr_nest_start(m2, WGPEER_A_ALLOWEDIPS);
	put_ip4(m2, 4, 32);
	put_ip4(m2, 0, 24);
	mnl_attr_nest_end(m2, ips);
	mnl_attr_nest_end(m2, peer);
	peer = mnl_attr_nest_start(m2, 0);
	memset(key, 0xcc, 32);
	mnl_attr_put(m2, WGPEER_A_PUBLIC_KEY, 32, key);
	mnl_attr_nest_end(m2, peer);
	mnl_attr_nest_end(m2, peers);

	CHECK_INT(wg_genl_parse_device(m1, dev), 0, "dump message 1");
	CHECK_INT(wg_genl_parse_device(m2, dev), 0, "dump message 2");
	CHECK_INT(dev->ifindex, 7, "ifindex");
	CHECK_STR(dev->ifname, "wgfab0", "ifname");
	CHECK_INT(dev->flags,
		  WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_PUBLIC_KEY | WGDEVICE_HAS_LISTEN_PORT |
		      WGDEVICE_HAS_FWMARK,
		  "device flags");
	CHECK_INT(dev->private_key[31], 0x11, "private key");
	CHECK_INT(dev->public_key[0], 0x12, "public key");
	CHECK_INT(dev->listen_port, 51820, "listen port");
	CHECK_INT(dev->n_peers, 3, "peer B coalesced");
	if (dev->n_peers == 3) {
		struct wg_peer *a = &dev->peers[0], *b = &dev->peers[1], *c = &dev->peers[2];
		const struct sockaddr_in *ep = (const struct sockaddr_in *)&a->endpoint;

		CHECK_INT(a->public_key[0], 0xaa, "peer A");
		CHECK_INT(a->flags, WGPEER_HAS_ENDPOINT | WGPEER_HAS_KEEPALIVE, "peer A flags");
		CHECK_INT(ep->sin_family, AF_INET, "endpoint family");
		CHECK_INT(ntohs(ep->sin_port), 51820, "endpoint port");
		CHECK_INT(ntohl(ep->sin_addr.s_addr), 0xc000020c, "endpoint address");
		CHECK_INT(a->keepalive, 25, "keepalive");
		CHECK_INT(a->last_handshake_sec, 1700000000, "handshake");
		CHECK_INT(a->last_handshake_nsec, 123, "handshake nsec");
		CHECK_INT(a->rx_bytes, 1000, "rx");
		CHECK_INT(a->tx_bytes, 2000, "tx");
		CHECK_INT(a->n_allowed_ips, 2, "peer A allowed IPs");
		CHECK_INT(b->public_key[0], 0xbb, "peer B");
		CHECK_INT(b->flags, WGPEER_HAS_PRESHARED_KEY | WGPEER_HAS_KEEPALIVE,
			  "peer B flags");
		CHECK_INT(b->preshared_key[5], 0x77, "peer B psk");
		CHECK_INT(b->n_allowed_ips, 3, "peer B allowed IPs from both messages");
		if (b->n_allowed_ips == 3) {
			CHECK_INT(b->allowed_ips[0].addr.bytes[3], 3, "order");
			CHECK_INT(b->allowed_ips[1].addr.bytes[3], 4, "order");
			CHECK_INT(b->allowed_ips[2].len, 24, "cidr");
		}
		CHECK_INT(c->public_key[0], 0xcc, "peer C");
		CHECK_INT(c->n_allowed_ips, 0, "peer C");
	}
	wg_device_free(dev);
}

static void test_parse_malformed(void)
{
	uint8_t buf[512], key[32] = {0};
	struct nlmsghdr *m;
	struct nlattr *peers, *peer, *ips;
	struct wg_device *dev = calloc(1, sizeof(*dev));

	/* a peer without a public key */
	m = dump_start(buf);
	peers = mnl_attr_nest_start(m, WGDEVICE_A_PEERS);
	peer = mnl_attr_nest_start(m, 0);
	mnl_attr_put_u16(m, WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL, 5);
	mnl_attr_nest_end(m, peer);
	mnl_attr_nest_end(m, peers);
	CHECK_INT(wg_genl_parse_device(m, dev), -EINVAL, "peer without key");

	/* an IPv4 allowed IP with cidr 33 */
	m = dump_start(buf);
	peers = mnl_attr_nest_start(m, WGDEVICE_A_PEERS);
	peer = mnl_attr_nest_start(m, 0);
	mnl_attr_put(m, WGPEER_A_PUBLIC_KEY, 32, key);
	ips = mnl_attr_nest_start(m, WGPEER_A_ALLOWEDIPS);
	put_ip4(m, 1, 33);
	mnl_attr_nest_end(m, ips);
	mnl_attr_nest_end(m, peer);
	mnl_attr_nest_end(m, peers);
	CHECK_INT(wg_genl_parse_device(m, dev), -EINVAL, "cidr 33");

	/* too short for the genl header */
	m = mnl_nlmsg_put_header(buf);
	CHECK_INT(wg_genl_parse_device(m, dev), -EINVAL, "no genl header");
	wg_device_free(dev);
}

int main(void)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the expected bytes are written for a little-endian host */
	test_set_device();
	test_peer_add_v4();
	test_peer_add_v6();
	test_peer_change();
	test_peer_remove();
	test_multi_peer();
	test_encode_get();
	test_encode_create();
#else
	unit_skip("test_wg_genl", "big-endian host: the exact-byte checks");
#endif
	test_split(8192);
	test_split(1024);
	test_split(300);
	test_many_peers(8192);
	test_many_peers(1024);
	test_too_small();
	test_parse_dump();
	test_parse_malformed();
	if (geteuid() == 0) {
		test_create_live();
		test_shared_sockets_live();
	} else {
		unit_skip("test_wg_genl", "not root: the live create part");
	}
	return unit_summary("test_wg_genl");
}
