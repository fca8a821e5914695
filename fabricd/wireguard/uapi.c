// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uapi.c - userspace WireGuard: the UAPI text protocol (pure encoder and
 * parser) and the exchange over wireguard-go's socket. The process itself is
 * managed in wireguard/uapi_proc.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "wireguard/uapi.h"
#include "wireguard/uapi_priv.h"
#include "definition/wgkey.h"

#define IO_TIMEOUT_S 5
/* once one did not answer in IO_TIMEOUT_S: each pass asks, and must not wait that long */
#define UNANSWERED_TIMEOUT_MS 200
#define REPLY_MAX	      ((size_t)64 << 20)

/* ---- a growing text buffer; it may hold keys, so every copy is wiped ---- */

struct text {
	char *p;
	size_t len, cap;
	int err;
};

static void text_free(struct text *t)
{
	if (t->p)
		explicit_bzero(t->p, t->cap);
	free(t->p);
	memset(t, 0, sizeof(*t));
}

/* Room for need more bytes and a NUL. Not realloc: the old copy must be wiped. */
static int text_reserve(struct text *t, size_t need)
{
	size_t cap = t->cap ? t->cap : 512;
	char *p;

	if (t->err)
		return t->err;
	if (t->len + need + 1 <= t->cap)
		return 0;
	while (cap < t->len + need + 1) {
		if (cap > REPLY_MAX)
			return t->err = -EMSGSIZE;
		cap *= 2;
	}
	p = malloc(cap);
	if (!p)
		return t->err = -ENOMEM;
	if (t->p) {
		memcpy(p, t->p, t->len);
		explicit_bzero(t->p, t->cap);
		free(t->p);
	}
	t->p = p;
	t->cap = cap;
	t->p[t->len] = '\0';
	return 0;
}

static void __attribute__((format(printf, 2, 3))) text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || text_reserve(t, (size_t)n) < 0) {
		t->err = t->err ? t->err : -EINVAL;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* ---- the protocol, pure ---- */

static void put_key(struct text *t, const char *name, const uint8_t key[WG_KEY_LEN])
{
	char hex[WGKEY_HEX_LEN];

	wgkey_to_hex(hex, key);
	text_printf(t, "%s=%s\n", name, hex);
	explicit_bzero(hex, sizeof(hex));
}

static int endpoint_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	char addr[IP_ADDR_STRLEN];
	struct ip_addr a;
	uint16_t port;

	if (ip_addr_from_sockaddr((const struct sockaddr *)ss, &a, &port) < 0)
		return -EINVAL;
	ip_addr_str(&a, addr, sizeof(addr));
	if (a.family == AF_INET)
		snprintf(buf, len, "%s:%u", addr, port);
	else if (sin6->sin6_scope_id)
		snprintf(buf, len, "[%s%%%u]:%u", addr, sin6->sin6_scope_id, port);
	else
		snprintf(buf, len, "[%s]:%u", addr, port);
	return 0;
}

static void put_peer(struct text *t, const struct wg_peer *p)
{
	char buf[IP_ADDR_STRLEN + 32];

	put_key(t, "public_key", p->public_key);
	if (p->flags & WGPEER_REMOVE_ME) {
		text_printf(t, "remove=true\n");
		return;
	}
	/* right after public_key: wireguard-go drops a peer it just created for it */
	if (p->flags & WGPEER_UPDATE_ONLY)
		text_printf(t, "update_only=true\n");
	if (p->flags & WGPEER_REPLACE_ALLOWEDIPS)
		text_printf(t, "replace_allowed_ips=true\n");
	if (p->flags & WGPEER_HAS_PRESHARED_KEY)
		put_key(t, "preshared_key", p->preshared_key);
	if (p->flags & WGPEER_HAS_ENDPOINT) {
		if (endpoint_str(&p->endpoint, buf, sizeof(buf)) < 0)
			t->err = t->err ? t->err : -EINVAL;
		else
			text_printf(t, "endpoint=%s\n", buf);
	}
	if (p->flags & WGPEER_HAS_KEEPALIVE)
		text_printf(t, "persistent_keepalive_interval=%u\n", p->keepalive);
	for (size_t i = 0; i < p->n_allowed_ips; i++) {
		const struct ip_prefix *ip = &p->allowed_ips[i];

		if (!ip_addr_len(&ip->addr) || ip->len > ip_addr_host_len(&ip->addr)) {
			t->err = t->err ? t->err : -EINVAL;
			return;
		}
		text_printf(t, "allowed_ip=%s/%u\n", ip_addr_str(&ip->addr, buf, sizeof(buf)),
			    ip->len);
	}
}

char *wg_uapi_encode_set(const struct wg_device *change, size_t *len, int *err)
{
	struct text t = {0};

	text_printf(&t, "set=1\n");
	if (change->flags & WGDEVICE_HAS_PRIVATE_KEY)
		put_key(&t, "private_key", change->private_key);
	if (change->flags & WGDEVICE_HAS_LISTEN_PORT)
		text_printf(&t, "listen_port=%u\n", change->listen_port);
	if (change->flags & WGDEVICE_HAS_FWMARK)
		text_printf(&t, "fwmark=%u\n", change->fwmark);
	for (size_t i = 0; i < change->n_peers; i++)
		put_peer(&t, &change->peers[i]);
	text_printf(&t, "\n");
	if (t.err) {
		*err = t.err;
		text_free(&t);
		return NULL;
	}
	*err = 0;
	*len = t.len;
	return t.p;
}

void wg_uapi_text_free(char *text, size_t len)
{
	if (!text)
		return;
	explicit_bzero(text, len + 1);
	free(text);
}

int wg_uapi_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EPROTO;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EPROTO;
	*out = v;
	return 0;
}

/* "1.2.3.4:51820", "[fd00::1]:51820", "[fe80::1%eth0]:51820" */
static int parse_endpoint(const char *value, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	uint32_t scope = 0;
	struct ip_addr a;
	uint16_t port;
	uint64_t v;
	char *zone;

	if (endpoint_split(value, host, sizeof(host), &port) < 0)
		return -EPROTO;
	zone = strchr(host, '%');
	if (zone) {
		*zone++ = '\0';
		scope = if_nametoindex(zone);
		if (!scope && wg_uapi_parse_u64(zone, UINT32_MAX, &v) == 0)
			scope = (uint32_t)v;
	}
	if (ip_addr_parse(host, &a) < 0 || !ip_addr_to_sockaddr(&a, port, ss))
		return -EPROTO;
	if (a.family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_scope_id = scope;
	return 0;
}

/* Like ip_prefix_parse, without insisting on zero host bits. */
static int parse_allowed_ip(const char *value, struct ip_prefix *out)
{
	char buf[IP_ADDR_STRLEN + 8];
	char *slash;
	uint64_t len;

	memset(out, 0, sizeof(*out));
	if (strlen(value) >= sizeof(buf))
		return -EPROTO;
	strcpy(buf, value);
	slash = strchr(buf, '/');
	if (!slash)
		return -EPROTO;
	*slash = '\0';
	if (ip_addr_parse(buf, &out->addr) < 0 ||
	    wg_uapi_parse_u64(slash + 1, ip_addr_host_len(&out->addr), &len) < 0)
		return -EPROTO;
	out->len = (uint8_t)len;
	return 0;
}

static int parse_peer_line(struct wg_peer *peer, const char *key, const char *value)
{
	struct ip_prefix ip;
	uint64_t v;
	int ret = 0;

	if (!strcmp(key, "preshared_key")) {
		ret = wgkey_from_hex(value, peer->preshared_key);
		if (!ret && !wgkey_is_zero(peer->preshared_key))
			peer->flags |= WGPEER_HAS_PRESHARED_KEY;
	} else if (!strcmp(key, "endpoint")) {
		ret = parse_endpoint(value, &peer->endpoint);
		if (!ret)
			peer->flags |= WGPEER_HAS_ENDPOINT;
	} else if (!strcmp(key, "persistent_keepalive_interval")) {
		ret = wg_uapi_parse_u64(value, UINT16_MAX, &v);
		peer->keepalive = (uint16_t)v;
	} else if (!strcmp(key, "allowed_ip")) {
		ret = parse_allowed_ip(value, &ip);
		if (!ret)
			ret = wg_peer_add_allowed_ip(peer, &ip);
	} else if (!strcmp(key, "last_handshake_time_sec")) {
		ret = wg_uapi_parse_u64(value, INT64_MAX, &v);
		peer->last_handshake_sec = (int64_t)v;
	} else if (!strcmp(key, "last_handshake_time_nsec")) {
		ret = wg_uapi_parse_u64(value, INT64_MAX, &v);
		peer->last_handshake_nsec = (int64_t)v;
	} else if (!strcmp(key, "rx_bytes")) {
		ret = wg_uapi_parse_u64(value, UINT64_MAX, &peer->rx_bytes);
	} else if (!strcmp(key, "tx_bytes")) {
		ret = wg_uapi_parse_u64(value, UINT64_MAX, &peer->tx_bytes);
	}
	/* protocol_version and keys of newer versions are ignored */
	return ret == -EINVAL ? -EPROTO : ret;
}

/* "errno=N": wireguard-go sends -EINVAL and the like; accept either sign. */
static int parse_errno(const char *value, int *err)
{
	uint64_t v;
	bool neg = value[0] == '-';

	if (wg_uapi_parse_u64(value + neg, 4095, &v) < 0)
		return -EPROTO;
	*err = -(int)v;
	return 0;
}

int wg_uapi_parse_get(const char *text, struct wg_device *dev)
{
	char line[512];
	size_t peer = 0; /* 1 + index of the current peer; 0 before the first */
	bool have_errno = false;
	int err = 0, ret = 0;
	uint64_t v;

	while (*text && *text != '\n') {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		char *value;

		if (n >= sizeof(line)) {
			ret = -EPROTO;
			goto out;
		}
		memcpy(line, text, n);
		line[n] = '\0';
		text += n + (nl ? 1 : 0);
		value = strchr(line, '=');
		if (!value) {
			ret = -EPROTO;
			goto out;
		}
		*value++ = '\0';
		if (!strcmp(line, "errno")) {
			ret = parse_errno(value, &err);
			have_errno = true;
		} else if (!strcmp(line, "public_key")) {
			struct wg_peer *p = wg_device_add_peer(dev);

			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			p->flags |= WGPEER_HAS_KEEPALIVE; /* always known: absent means 0 */
			peer = dev->n_peers;
			ret = wgkey_from_hex(value, p->public_key) < 0 ? -EPROTO : 0;
		} else if (peer) {
			ret = parse_peer_line(&dev->peers[peer - 1], line, value);
		} else if (!strcmp(line, "private_key")) {
			ret = wgkey_from_hex(value, dev->private_key) < 0 ? -EPROTO : 0;
			if (!ret && !wgkey_is_zero(dev->private_key))
				dev->flags |= WGDEVICE_HAS_PRIVATE_KEY;
		} else if (!strcmp(line, "listen_port")) {
			ret = wg_uapi_parse_u64(value, UINT16_MAX, &v);
			dev->listen_port = (uint16_t)v;
		} else if (!strcmp(line, "fwmark")) {
			ret = wg_uapi_parse_u64(value, UINT32_MAX, &v);
			dev->fwmark = (uint32_t)v;
		}
		if (ret < 0)
			goto out;
	}
	if (!have_errno)
		ret = -EPROTO;
	else if (err)
		ret = err;
	if (ret)
		goto out;
	/* wireguard-go omits a zero listen port and fwmark: both are known */
	dev->flags |= WGDEVICE_HAS_LISTEN_PORT | WGDEVICE_HAS_FWMARK;
	if (dev->flags & WGDEVICE_HAS_PRIVATE_KEY) {
		wgkey_public(dev->public_key, dev->private_key);
		dev->flags |= WGDEVICE_HAS_PUBLIC_KEY;
	}
out:
	explicit_bzero(line, sizeof(line));
	return ret;
}

/* The errno of any answer; a get answer is parsed in full and dropped. */
static int answer_status(const char *text)
{
	struct wg_device *dev = calloc(1, sizeof(*dev));
	int ret = dev ? wg_uapi_parse_get(text, dev) : -ENOMEM;

	wg_device_free(dev);
	return ret;
}

/* ---- the socket ---- */

void wg_uapi_run_path(char *buf, size_t len, const char *ifname, const char *suffix)
{
	snprintf(buf, len, "%s/%s.%s", WG_UAPI_RUN_DIR, ifname, suffix);
}

/*
 * Whether the last exchange timed out: a stopped or hung wireguard-go. Until
 * one gets an answer, each waits UNANSWERED_TIMEOUT_MS, not IO_TIMEOUT_S: the
 * daemon asks on every pass, and its other repairs go on meanwhile.
 */
static bool unanswered;

static int uapi_exchange_once(const char *ifname, const char *req, size_t len, struct text *reply)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	int fd, ret;

	if (unanswered)
		tv = (struct timeval){.tv_usec = UNANSWERED_TIMEOUT_MS * 1000};

	wg_uapi_run_path(sun.sun_path, sizeof(sun.sun_path), ifname, "sock");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a wedged wireguard-go must not hang fabricd */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		if (ret == -ENOENT || ret == -ECONNREFUSED)
			ret = -ENODEV;
		else if (ret == -EAGAIN) /* its backlog full: it accepts nothing */
			ret = -ETIMEDOUT;
		goto out;
	}
	while (len) {
		ssize_t n = send(fd, req, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		req += n;
		len -= (size_t)n;
	}
	/* every answer ends with a blank line, the only one in it */
	while (reply->len < 2 || strcmp(reply->p + reply->len - 2, "\n\n")) {
		ssize_t n;

		ret = text_reserve(reply, 4096);
		if (ret < 0)
			goto out;
		n = read(fd, reply->p + reply->len, reply->cap - reply->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		if (n == 0)
			break;
		reply->len += (size_t)n;
		reply->p[reply->len] = '\0';
	}
	ret = reply->len ? 0 : -EPROTO;
out:
	close(fd);
	return ret;
}

static int uapi_exchange(const char *ifname, const char *req, size_t len, struct text *reply)
{
	int ret = uapi_exchange_once(ifname, req, len, reply);

	if (ret == -ETIMEDOUT)
		unanswered = true;
	else if (ret == 0 || ret == -ENODEV)
		unanswered = false; /* it answered, or another will: the next one waits in full */
	return ret;
}

static void exchange_error(const char *ifname, const char *what, int err)
{
	char path[RUN_PATH_MAX];

	wg_uapi_run_path(path, sizeof(path), ifname, "sock");
	if (err == -ENODEV)
		wg_set_last_error("%s: %s failed: no wireguard-go answers on %s", ifname, what,
				  path);
	else
		wg_set_last_error("%s: %s failed: %s (%s)", ifname, what, strerror(-err), path);
}

bool wg_uapi_unanswered(void)
{
	return unanswered;
}

bool wg_uapi_answers_in_full(const char *ifname)
{
	unanswered = false; /* this one waits IO_TIMEOUT_S */
	return wg_uapi_exists(ifname);
}

bool wg_uapi_exists(const char *ifname)
{
	struct text reply = {0};
	bool ok;

	if (!wg_ifname_valid(ifname))
		return false;
	ok = uapi_exchange(ifname, "get=1\n\n", 7, &reply) == 0 && answer_status(reply.p) == 0;
	text_free(&reply);
	return ok;
}

int wg_uapi_get(const char *ifname, struct wg_device **out)
{
	struct text reply = {0};
	struct wg_device *dev;
	int ret;

	*out = NULL;
	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	snprintf(dev->ifname, sizeof(dev->ifname), "%s", ifname);
	ret = uapi_exchange(ifname, "get=1\n\n", 7, &reply);
	if (ret < 0) {
		exchange_error(ifname, "get", ret);
		goto out;
	}
	ret = wg_uapi_parse_get(reply.p, dev);
	if (ret < 0) {
		wg_set_last_error("%s: wireguard-go answered get with an error: %s", ifname,
				  strerror(-ret));
		goto out;
	}
	*out = dev;
	dev = NULL;
out:
	text_free(&reply);
	wg_device_free(dev);
	return ret;
}

int wg_uapi_set(const struct wg_device *change)
{
	struct text reply = {0};
	size_t len = 0;
	char *req;
	int ret;

	if (!wg_ifname_valid(change->ifname))
		return -EINVAL;
	req = wg_uapi_encode_set(change, &len, &ret);
	if (!req) {
		wg_set_last_error("%s: cannot encode the WireGuard change: %s", change->ifname,
				  strerror(-ret));
		return ret;
	}
	ret = uapi_exchange(change->ifname, req, len, &reply);
	if (ret < 0) {
		exchange_error(change->ifname, "set", ret);
		goto out;
	}
	ret = answer_status(reply.p);
	if (ret < 0)
		wg_set_last_error("%s: wireguard-go refused the change: %s", change->ifname,
				  strerror(-ret));
out:
	wg_uapi_text_free(req, len);
	text_free(&reply);
	return ret;
}
