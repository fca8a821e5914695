// SPDX-License-Identifier: GPL-2.0-or-later
/* genl.c - kernel WireGuard over generic netlink: pure encoders/parsers, thin I/O. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/wireguard.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "netlink/nl.h"
#include "wireguard/genl.h"
#include "definition/wgkey.h"

/* Entries of WGDEVICE_A_PEERS and WGPEER_A_ALLOWEDIPS are nests of type 0. */
#define WG_LIST_ENTRY 0

/* The kernel's struct __kernel_timespec, as WGPEER_A_LAST_HANDSHAKE_TIME carries it. */
struct wg_timespec {
	int64_t tv_sec;
	int64_t tv_nsec;
};

static struct nlmsghdr *put_genl_header(void *buf, size_t buflen, uint16_t family_id,
					uint16_t flags, uint8_t cmd, uint32_t seq, uint32_t portid)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl;

	/* libmnl before 1.0.5 leaves attribute padding as it was: no stale bytes, ever */
	memset(buf, 0, buflen);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = family_id;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = portid;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = WG_GENL_VERSION;
	return nlh;
}

/* Copies only the meaningful fields, so padding never leaks into the message. */
static int put_endpoint(struct nlmsghdr *nlh, size_t buflen, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *from = (const struct sockaddr_in *)ss;
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = from->sin_port;
		sin.sin_addr = from->sin_addr;
		return mnl_attr_put_check(nlh, buflen, WGPEER_A_ENDPOINT, sizeof(sin), &sin) ? 1
											     : 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *from = (const struct sockaddr_in6 *)ss;
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = from->sin6_port;
		sin6.sin6_flowinfo = from->sin6_flowinfo;
		sin6.sin6_addr = from->sin6_addr;
		sin6.sin6_scope_id = from->sin6_scope_id;
		return mnl_attr_put_check(nlh, buflen, WGPEER_A_ENDPOINT, sizeof(sin6), &sin6) ? 1
											       : 0;
	}
	return -EINVAL;
}

/* The first part of a peer after its public key. 1 fits, 0 no room, -EINVAL. */
static int put_peer_settings(struct nlmsghdr *nlh, size_t buflen, const struct wg_peer *p)
{
	uint32_t flags = 0;
	int ret;

	if (p->flags & WGPEER_REMOVE_ME)
		/* the kernel removes the peer and ignores the rest of its nest */
		return mnl_attr_put_u32_check(nlh, buflen, WGPEER_A_FLAGS, WGPEER_F_REMOVE_ME) ? 1
											       : 0;
	if ((p->flags & WGPEER_HAS_PRESHARED_KEY) &&
	    !mnl_attr_put_check(nlh, buflen, WGPEER_A_PRESHARED_KEY, WG_KEY_LEN, p->preshared_key))
		return 0;
	if (p->flags & WGPEER_HAS_ENDPOINT) {
		ret = put_endpoint(nlh, buflen, &p->endpoint);
		if (ret <= 0)
			return ret;
	}
	if ((p->flags & WGPEER_HAS_KEEPALIVE) &&
	    !mnl_attr_put_u16_check(nlh, buflen, WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL,
				    p->keepalive))
		return 0;
	if (p->flags & WGPEER_REPLACE_ALLOWEDIPS)
		flags |= WGPEER_F_REPLACE_ALLOWEDIPS;
	if (p->flags & WGPEER_UPDATE_ONLY)
		flags |= WGPEER_F_UPDATE_ONLY;
	if (flags && !mnl_attr_put_u32_check(nlh, buflen, WGPEER_A_FLAGS, flags))
		return 0;
	return 1;
}

/* One allowed IP nest; cancelled when it does not fit. 1 fits, 0 no room, -EINVAL. */
static int put_allowed_ip(struct nlmsghdr *nlh, size_t buflen, const struct ip_prefix *ip)
{
	size_t addr_len = ip_addr_len(&ip->addr);
	struct nlattr *nest;

	if (!addr_len || ip->len > addr_len * 8)
		return -EINVAL;
	nest = mnl_attr_nest_start_check(nlh, buflen, WG_LIST_ENTRY);
	if (!nest)
		return 0;
	if (!mnl_attr_put_u16_check(nlh, buflen, WGALLOWEDIP_A_FAMILY, (uint16_t)ip->addr.family) ||
	    !mnl_attr_put_check(nlh, buflen, WGALLOWEDIP_A_IPADDR, addr_len, ip->addr.bytes) ||
	    !mnl_attr_put_u8_check(nlh, buflen, WGALLOWEDIP_A_CIDR_MASK, ip->len)) {
		mnl_attr_nest_cancel(nlh, nest);
		return 0;
	}
	mnl_attr_nest_end(nlh, nest);
	return 1;
}

/*
 * Adds as much of the current peer as fits. Returns 1 when the peer is
 * complete (move on), 0 when the message is full, -EINVAL. *progress is set
 * when something of this peer went into the message. A peer is split over
 * messages only when it leads one (alone): one behind others that does not
 * fit whole starts the next message, as a split peer is briefly without some
 * of its allowed IPs (REPLACE_ALLOWEDIPS comes with the first part).
 */
static int put_peer(struct nlmsghdr *nlh, size_t buflen, const struct wg_peer *p,
		    struct wg_genl_cursor *cur, bool alone, bool *progress)
{
	size_t n_ips = (p->flags & WGPEER_REMOVE_ME) ? 0 : p->n_allowed_ips;
	bool first = !cur->peer_started;
	size_t added = 0;
	bool complete = true;
	struct nlattr *peer, *ips;
	int ret;

	*progress = false;
	peer = mnl_attr_nest_start_check(nlh, buflen, WG_LIST_ENTRY);
	if (!peer)
		return 0;
	if (!mnl_attr_put_check(nlh, buflen, WGPEER_A_PUBLIC_KEY, WG_KEY_LEN, p->public_key))
		goto cancel;
	if (first) {
		ret = put_peer_settings(nlh, buflen, p);
		if (ret < 0) {
			mnl_attr_nest_cancel(nlh, peer);
			return ret;
		}
		if (!ret)
			goto cancel;
	} else if (!mnl_attr_put_u32_check(nlh, buflen, WGPEER_A_FLAGS, WGPEER_F_UPDATE_ONLY)) {
		goto cancel;
	}
	if (cur->allowed_ip < n_ips) {
		ips = mnl_attr_nest_start_check(nlh, buflen, WGPEER_A_ALLOWEDIPS);
		complete = false;
		while (ips && cur->allowed_ip < n_ips) {
			ret = put_allowed_ip(nlh, buflen, &p->allowed_ips[cur->allowed_ip]);
			if (ret < 0) {
				mnl_attr_nest_cancel(nlh, peer);
				return ret;
			}
			if (!ret)
				break;
			cur->allowed_ip++;
			added++;
		}
		if (ips && added)
			mnl_attr_nest_end(nlh, ips);
		else if (ips)
			mnl_attr_nest_cancel(nlh, ips);
		complete = cur->allowed_ip == n_ips;
	}
	/* a continued peer without a single new allowed IP would be an empty repeat */
	if (!first && !added)
		goto cancel;
	if (first && !complete && !alone) {
		cur->allowed_ip = 0;
		goto cancel;
	}
	mnl_attr_nest_end(nlh, peer);
	*progress = true;
	if (!complete) {
		cur->peer_started = true;
		return 0;
	}
	return 1;
cancel:
	mnl_attr_nest_cancel(nlh, peer);
	return 0;
}

size_t wg_genl_encode_set(const struct wg_device *change, uint16_t family_id, uint32_t seq,
			  uint32_t portid, void *buf, size_t buflen, struct wg_genl_cursor *cursor)
{
	struct nlattr *peers = NULL;
	struct nlmsghdr *nlh;
	size_t in_message = 0;
	bool progress = false;
	int ret;

	cursor->error = 0;
	if (cursor->done)
		return 0;
	if (buflen < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)))
		goto too_small;
	nlh = put_genl_header(buf, buflen, family_id, NLM_F_REQUEST | NLM_F_ACK, WG_CMD_SET_DEVICE,
			      seq, portid);
	if (!mnl_attr_put_strz_check(nlh, buflen, WGDEVICE_A_IFNAME, change->ifname))
		goto too_small;
	if (!cursor->messages) {
		/* device attributes only once; WGDEVICE_A_FLAGS (REPLACE_PEERS) never */
		if ((change->flags & WGDEVICE_HAS_PRIVATE_KEY) &&
		    !mnl_attr_put_check(nlh, buflen, WGDEVICE_A_PRIVATE_KEY, WG_KEY_LEN,
					change->private_key))
			goto too_small;
		if ((change->flags & WGDEVICE_HAS_LISTEN_PORT) &&
		    !mnl_attr_put_u16_check(nlh, buflen, WGDEVICE_A_LISTEN_PORT,
					    change->listen_port))
			goto too_small;
		if ((change->flags & WGDEVICE_HAS_FWMARK) &&
		    !mnl_attr_put_u32_check(nlh, buflen, WGDEVICE_A_FWMARK, change->fwmark))
			goto too_small;
		progress = true;
	}
	if (cursor->peer < change->n_peers)
		peers = mnl_attr_nest_start_check(nlh, buflen, WGDEVICE_A_PEERS);
	while (peers && cursor->peer < change->n_peers) {
		bool peer_progress;

		ret = put_peer(nlh, buflen, &change->peers[cursor->peer], cursor, !in_message,
			       &peer_progress);
		if (ret < 0) {
			cursor->error = ret;
			return 0;
		}
		if (peer_progress) {
			in_message++;
			progress = true;
		}
		if (!ret)
			break;
		cursor->peer++;
		cursor->allowed_ip = 0;
		cursor->peer_started = false;
	}
	if (peers && in_message)
		mnl_attr_nest_end(nlh, peers);
	else if (peers)
		mnl_attr_nest_cancel(nlh, peers);
	if (!progress)
		goto too_small;
	cursor->messages++;
	cursor->done = cursor->peer >= change->n_peers;
	return nlh->nlmsg_len;
too_small:
	cursor->error = -EMSGSIZE;
	return 0;
}

size_t wg_genl_encode_get(const char *ifname, uint16_t family_id, uint32_t seq, uint32_t portid,
			  void *buf, size_t buflen)
{
	struct nlmsghdr *nlh;

	if (buflen < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)))
		return 0;
	nlh = put_genl_header(buf, buflen, family_id, NLM_F_REQUEST | NLM_F_DUMP, WG_CMD_GET_DEVICE,
			      seq, portid);
	if (!mnl_attr_put_strz_check(nlh, buflen, WGDEVICE_A_IFNAME, ifname))
		return 0;
	return nlh->nlmsg_len;
}

static bool attr_is(const struct nlattr *attr, enum mnl_attr_data_type type)
{
	return mnl_attr_validate(attr, type) == 0;
}

static int parse_allowed_ip(const struct nlattr *nest, struct wg_peer *peer)
{
	const struct nlattr *attr;
	struct ip_prefix ip;
	bool has_cidr = false;
	size_t addr_len = 0;

	memset(&ip, 0, sizeof(ip));
	mnl_attr_for_each_nested(attr, nest)
	{
		switch (mnl_attr_get_type(attr)) {
		case WGALLOWEDIP_A_FAMILY:
			if (attr_is(attr, MNL_TYPE_U16))
				ip.addr.family = mnl_attr_get_u16(attr);
			break;
		case WGALLOWEDIP_A_IPADDR:
			addr_len = mnl_attr_get_payload_len(attr);
			if (addr_len == 4 || addr_len == 16)
				memcpy(ip.addr.bytes, mnl_attr_get_payload(attr), addr_len);
			break;
		case WGALLOWEDIP_A_CIDR_MASK:
			if (attr_is(attr, MNL_TYPE_U8)) {
				ip.len = mnl_attr_get_u8(attr);
				has_cidr = true;
			}
			break;
		}
	}
	if (!has_cidr || !ip_addr_len(&ip.addr) || addr_len != ip_addr_len(&ip.addr) ||
	    ip.len > addr_len * 8)
		return -EINVAL;
	return wg_peer_add_allowed_ip(peer, &ip);
}

static void parse_endpoint(const struct nlattr *attr, struct wg_peer *peer)
{
	const struct sockaddr *sa = mnl_attr_get_payload(attr);
	size_t len = mnl_attr_get_payload_len(attr);

	if (len < sizeof(sa->sa_family))
		return;
	if ((sa->sa_family == AF_INET && len == sizeof(struct sockaddr_in)) ||
	    (sa->sa_family == AF_INET6 && len == sizeof(struct sockaddr_in6))) {
		memset(&peer->endpoint, 0, sizeof(peer->endpoint));
		memcpy(&peer->endpoint, sa, len);
		peer->flags |= WGPEER_HAS_ENDPOINT;
	}
}

/* The attributes of one WGDEVICE_A_PEERS entry into tmp. 0 or -errno. */
static int parse_peer_attrs(const struct nlattr *nest, struct wg_peer *tmp, bool *has_key)
{
	const struct nlattr *attr;
	struct wg_timespec ts;

	mnl_attr_for_each_nested(attr, nest)
	{
		switch (mnl_attr_get_type(attr)) {
		case WGPEER_A_PUBLIC_KEY:
			if (mnl_attr_get_payload_len(attr) == WG_KEY_LEN) {
				memcpy(tmp->public_key, mnl_attr_get_payload(attr), WG_KEY_LEN);
				*has_key = true;
			}
			break;
		case WGPEER_A_PRESHARED_KEY:
			if (mnl_attr_get_payload_len(attr) == WG_KEY_LEN) {
				memcpy(tmp->preshared_key, mnl_attr_get_payload(attr), WG_KEY_LEN);
				if (!wgkey_is_zero(tmp->preshared_key))
					tmp->flags |= WGPEER_HAS_PRESHARED_KEY;
			}
			break;
		case WGPEER_A_ENDPOINT:
			parse_endpoint(attr, tmp);
			break;
		case WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL:
			if (attr_is(attr, MNL_TYPE_U16)) {
				tmp->keepalive = mnl_attr_get_u16(attr);
				tmp->flags |= WGPEER_HAS_KEEPALIVE;
			}
			break;
		case WGPEER_A_LAST_HANDSHAKE_TIME:
			if (mnl_attr_get_payload_len(attr) == sizeof(ts)) {
				memcpy(&ts, mnl_attr_get_payload(attr), sizeof(ts));
				tmp->last_handshake_sec = ts.tv_sec;
				tmp->last_handshake_nsec = ts.tv_nsec;
			}
			break;
		case WGPEER_A_RX_BYTES:
			if (attr_is(attr, MNL_TYPE_U64))
				tmp->rx_bytes = mnl_attr_get_u64(attr);
			break;
		case WGPEER_A_TX_BYTES:
			if (attr_is(attr, MNL_TYPE_U64))
				tmp->tx_bytes = mnl_attr_get_u64(attr);
			break;
		case WGPEER_A_ALLOWEDIPS: {
			const struct nlattr *ip;

			mnl_attr_for_each_nested(ip, attr)
			{
				int ret = parse_allowed_ip(ip, tmp);

				if (ret < 0)
					return ret;
			}
			break;
		}
		}
	}
	return 0;
}

/* Appends (or coalesces) one WGDEVICE_A_PEERS entry. */
static int parse_peer(const struct nlattr *nest, struct wg_device *dev)
{
	struct wg_peer tmp, *last;
	bool has_key = false;
	int ret;

	memset(&tmp, 0, sizeof(tmp));
	ret = parse_peer_attrs(nest, &tmp, &has_key);
	if (ret < 0)
		goto out;
	if (!has_key) {
		ret = -EINVAL;
		goto out;
	}
	last = dev->n_peers ? &dev->peers[dev->n_peers - 1] : NULL;
	if (last && !memcmp(last->public_key, tmp.public_key, WG_KEY_LEN)) {
		/* the kernel continues a long allowed-IP list in the next message */
		for (size_t i = 0; i < tmp.n_allowed_ips; i++) {
			ret = wg_peer_add_allowed_ip(last, &tmp.allowed_ips[i]);
			if (ret < 0)
				goto out;
		}
		goto out;
	}
	last = wg_device_add_peer(dev);
	if (!last) {
		ret = -ENOMEM;
		goto out;
	}
	*last = tmp;
	tmp.allowed_ips = NULL; /* moved */
out:
	free(tmp.allowed_ips);
	explicit_bzero(&tmp, sizeof(tmp));
	return ret;
}

int wg_genl_parse_device(const struct nlmsghdr *nlh, struct wg_device *dev)
{
	const struct nlattr *attr;
	size_t len;
	int ret;

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)))
		return -EINVAL;
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
	{
		switch (mnl_attr_get_type(attr)) {
		case WGDEVICE_A_IFINDEX:
			if (attr_is(attr, MNL_TYPE_U32))
				dev->ifindex = (int)mnl_attr_get_u32(attr);
			break;
		case WGDEVICE_A_IFNAME:
			len = mnl_attr_get_payload_len(attr);
			if (attr_is(attr, MNL_TYPE_NUL_STRING) && len <= sizeof(dev->ifname))
				memcpy(dev->ifname, mnl_attr_get_payload(attr), len);
			break;
		case WGDEVICE_A_PRIVATE_KEY:
			if (mnl_attr_get_payload_len(attr) == WG_KEY_LEN) {
				memcpy(dev->private_key, mnl_attr_get_payload(attr), WG_KEY_LEN);
				if (!wgkey_is_zero(dev->private_key))
					dev->flags |= WGDEVICE_HAS_PRIVATE_KEY;
			}
			break;
		case WGDEVICE_A_PUBLIC_KEY:
			if (mnl_attr_get_payload_len(attr) == WG_KEY_LEN) {
				memcpy(dev->public_key, mnl_attr_get_payload(attr), WG_KEY_LEN);
				if (!wgkey_is_zero(dev->public_key))
					dev->flags |= WGDEVICE_HAS_PUBLIC_KEY;
			}
			break;
		case WGDEVICE_A_LISTEN_PORT:
			if (attr_is(attr, MNL_TYPE_U16)) {
				dev->listen_port = mnl_attr_get_u16(attr);
				dev->flags |= WGDEVICE_HAS_LISTEN_PORT;
			}
			break;
		case WGDEVICE_A_FWMARK:
			if (attr_is(attr, MNL_TYPE_U32)) {
				dev->fwmark = mnl_attr_get_u32(attr);
				dev->flags |= WGDEVICE_HAS_FWMARK;
			}
			break;
		case WGDEVICE_A_PEERS: {
			const struct nlattr *peer;

			mnl_attr_for_each_nested(peer, attr)
			{
				ret = parse_peer(peer, dev);
				if (ret < 0)
					return ret;
			}
			break;
		}
		}
	}
	return 0;
}

/* ---- I/O: sockets, the family id; the link itself is in wireguard/genl_link.c ---- */

/*
 * One generic netlink socket per process and network namespace, with the
 * family id resolved once: the daemon keeps it across passes, a peer change
 * costs no socket and no family lookup. A socket stays in the namespace it
 * was opened in, so a process that moved (the unit tests unshare) opens anew;
 * so does one whose send or receive failed (nl_sock.broken). The family id is
 * asked for again while the kernel has none (the module may be loaded later)
 * and after the kernel said it no longer knows it (-ENOENT: the module was
 * unloaded, perhaps loaded again under another id).
 */
static struct {
	bool open;
	struct nl_sock s;
	uint16_t family_id; /* 0: not resolved */
	ino_t netns;
	unsigned int opened, resolved; /* for wg_genl_counts() */
} genl;

static ino_t current_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
}

void wg_genl_close(void)
{
	unsigned int opened = genl.opened, resolved = genl.resolved;

	if (genl.open)
		nl_close(&genl.s);
	memset(&genl, 0, sizeof(genl));
	genl.opened = opened;
	genl.resolved = resolved;
}

void wg_genl_counts(unsigned int *opened, unsigned int *resolved)
{
	*opened = genl.opened;
	*resolved = genl.resolved;
}

void wg_genl_test_family(uint16_t id)
{
	genl.family_id = id;
}

static int open_genl(struct nl_sock **s, uint16_t *family_id, const char *ifname)
{
	ino_t netns = current_netns();
	char err[128];
	int ret;

	if (genl.open && (genl.netns != netns || genl.s.broken))
		wg_genl_close();
	if (!genl.open) {
		ret = nl_open(&genl.s, NETLINK_GENERIC);
		if (ret < 0) {
			wg_set_last_error("%s: cannot open a generic netlink socket: %s", ifname,
					  nl_strerror(NULL, ret, err, sizeof(err)));
			return ret;
		}
		genl.open = true;
		genl.netns = netns;
		genl.opened++;
	}
	if (!genl.family_id) {
		ret = nl_genl_family(&genl.s, WG_GENL_NAME, &genl.family_id);
		if (ret < 0) {
			if (ret == -EPROTONOSUPPORT)
				wg_set_last_error("%s: %s", ifname, WG_GENL_NO_KERNEL);
			else
				wg_set_last_error(
				    "%s: cannot resolve the wireguard netlink family: %s", ifname,
				    nl_strerror(&genl.s, ret, err, sizeof(err)));
			genl.family_id = 0;
			if (genl.s.broken)
				wg_genl_close();
			return ret;
		}
		genl.resolved++;
	}
	*s = &genl.s;
	*family_id = genl.family_id;
	return 0;
}

/*
 * After a failure: a socket whose send or receive failed may have replies
 * unread (the next call opens anew); -ENOENT is the generic netlink core's
 * answer to a family id it does not know (wireguard was unloaded).
 */
static void genl_failed(int err)
{
	if (genl.s.broken)
		wg_genl_close();
	else if (err == -ENOENT)
		genl.family_id = 0;
}

bool wg_genl_available(void)
{
	struct nl_sock *s;
	uint16_t id;

	/* the probe of every pass: an open socket with a known family answers at once */
	return open_genl(&s, &id, WG_GENL_NAME) == 0;
}

static void dump_reset(void *data)
{
	struct wg_device *dev = data;
	char ifname[sizeof(dev->ifname)];

	memcpy(ifname, dev->ifname, sizeof(ifname));
	wg_device_clear(dev);
	memcpy(dev->ifname, ifname, sizeof(ifname));
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	int ret = wg_genl_parse_device(nlh, data);

	if (ret < 0) {
		errno = -ret;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int genl_get_once(const char *ifname, struct wg_device **out)
{
	struct wg_device *dev = NULL;
	char buf[NL_MSG_BUF], err[NL_EXTACK_MAX + 64];
	struct nl_sock *s;
	uint16_t family_id;
	int ret;

	*out = NULL;
	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	ret = open_genl(&s, &family_id, ifname);
	if (ret < 0)
		return ret;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(dev->ifname, sizeof(dev->ifname), "%s", ifname);
	if (!wg_genl_encode_get(ifname, family_id, s->seq++, 0, buf, sizeof(buf))) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = nl_dump(s, (struct nlmsghdr *)buf, dump_cb, dump_reset, dev);
	if (ret < 0) {
		wg_set_last_error("%s: reading the WireGuard device failed: %s", ifname,
				  nl_strerror(s, ret, err, sizeof(err)));
		genl_failed(ret);
		goto out;
	}
	/* the kernel always reports both; absent means 0 */
	dev->flags |= WGDEVICE_HAS_LISTEN_PORT | WGDEVICE_HAS_FWMARK;
	*out = dev;
	dev = NULL;
out:
	wg_device_free(dev);
	return ret;
}

/* *sent: how many messages went out (a retry is safe only when the first failed). */
static int genl_set_once(const struct wg_device *change, unsigned int *sent)
{
	char buf[NL_MSG_BUF], err[NL_EXTACK_MAX + 64];
	struct wg_genl_cursor cursor = {0};
	struct nl_sock *s;
	uint16_t family_id;
	int ret;

	if (!wg_ifname_valid(change->ifname))
		return -EINVAL;
	ret = open_genl(&s, &family_id, change->ifname);
	if (ret < 0)
		return ret;
	while (!cursor.done) {
		size_t len =
		    wg_genl_encode_set(change, family_id, s->seq++, 0, buf, sizeof(buf), &cursor);

		if (!len) {
			ret = cursor.error ? cursor.error : -EINVAL;
			wg_set_last_error("%s: cannot encode the WireGuard change: %s",
					  change->ifname, strerror(-ret));
			goto out;
		}
		*sent = cursor.messages;
		ret = nl_request(s, (struct nlmsghdr *)buf, NULL, NULL);
		if (ret < 0) {
			wg_set_last_error("%s: setting the WireGuard device failed%s: %s",
					  change->ifname,
					  cursor.messages > 1 ? " (partly applied)" : "",
					  nl_strerror(s, ret, err, sizeof(err)));
			genl_failed(ret);
			goto out;
		}
	}
	ret = 0;
out:
	explicit_bzero(buf, sizeof(buf)); /* held the private key */
	return ret;
}

int wg_genl_get(const char *ifname, struct wg_device **out)
{
	int ret = genl_get_once(ifname, out);

	/* the family id the kernel knew at the first lookup is gone: look it up again */
	if (ret == -ENOENT)
		ret = genl_get_once(ifname, out);
	return ret;
}

int wg_genl_set(const struct wg_device *change)
{
	unsigned int sent = 0;
	int ret = genl_set_once(change, &sent);

	/* the kernel ran none of it: the same change under the family's new id */
	if (ret == -ENOENT && sent == 1)
		ret = genl_set_once(change, &sent);
	return ret;
}
