// SPDX-License-Identifier: GPL-2.0-or-later
/* wg_uapi.c - userspace WireGuard: wireguard-go processes and the UAPI text protocol. */
#define _GNU_SOURCE /* pipe2, close_range */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wg_uapi.h"
#include "wgkey.h"

#define START_TIMEOUT_MS 3000
#define STOP_TIMEOUT_MS	 2000
#define STEP_MS		 20
#define IO_TIMEOUT_S	 5
#define REPLY_MAX	 ((size_t)64 << 20)
#define WG_GO		 "wireguard-go"
#define RUN_PATH_MAX	 64 /* WG_UAPI_RUN_DIR "/" IFNAME ".pid.tmp" */

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

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
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
		if (!scope && parse_u64(zone, UINT32_MAX, &v) == 0)
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
	    parse_u64(slash + 1, ip_addr_host_len(&out->addr), &len) < 0)
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
		ret = parse_u64(value, UINT16_MAX, &v);
		peer->keepalive = (uint16_t)v;
	} else if (!strcmp(key, "allowed_ip")) {
		ret = parse_allowed_ip(value, &ip);
		if (!ret)
			ret = wg_peer_add_allowed_ip(peer, &ip);
	} else if (!strcmp(key, "last_handshake_time_sec")) {
		ret = parse_u64(value, INT64_MAX, &v);
		peer->last_handshake_sec = (int64_t)v;
	} else if (!strcmp(key, "last_handshake_time_nsec")) {
		ret = parse_u64(value, INT64_MAX, &v);
		peer->last_handshake_nsec = (int64_t)v;
	} else if (!strcmp(key, "rx_bytes")) {
		ret = parse_u64(value, UINT64_MAX, &peer->rx_bytes);
	} else if (!strcmp(key, "tx_bytes")) {
		ret = parse_u64(value, UINT64_MAX, &peer->tx_bytes);
	}
	/* protocol_version and keys of newer versions are ignored */
	return ret == -EINVAL ? -EPROTO : ret;
}

/* "errno=N": wireguard-go sends -EINVAL and the like; accept either sign. */
static int parse_errno(const char *value, int *err)
{
	uint64_t v;
	bool neg = value[0] == '-';

	if (parse_u64(value + neg, 4095, &v) < 0)
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
			ret = parse_u64(value, UINT16_MAX, &v);
			dev->listen_port = (uint16_t)v;
		} else if (!strcmp(line, "fwmark")) {
			ret = parse_u64(value, UINT32_MAX, &v);
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

static void run_path(char *buf, size_t len, const char *ifname, const char *suffix)
{
	snprintf(buf, len, "%s/%s.%s", WG_UAPI_RUN_DIR, ifname, suffix);
}

static int uapi_exchange(const char *ifname, const char *req, size_t len, struct text *reply)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	int fd, ret;

	run_path(sun.sun_path, sizeof(sun.sun_path), ifname, "sock");
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

static void exchange_error(const char *ifname, const char *what, int err)
{
	char path[RUN_PATH_MAX];

	run_path(path, sizeof(path), ifname, "sock");
	if (err == -ENODEV)
		wg_set_last_error("%s: %s failed: no wireguard-go answers on %s", ifname, what,
				  path);
	else
		wg_set_last_error("%s: %s failed: %s (%s)", ifname, what, strerror(-err), path);
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

bool wg_uapi_available(void)
{
	const char *path = getenv("PATH");
	char file[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(file, sizeof(file), "%.*s/%s", (int)n, path, WG_GO);
		if (n && access(file, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* ---- the wireguard-go process ---- */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* What the intermediate child reports, one write each (atomic on a pipe). */
enum { MSG_PID = 1, MSG_EXEC_FAILED, MSG_EXITED };

struct start_msg {
	int32_t kind;
	int32_t value; /* PID, errno of exec, or wait status */
};

static void send_msg(int fd, int32_t kind, int32_t value)
{
	struct start_msg m = {.kind = kind, .value = value};

	while (write(fd, &m, sizeof(m)) < 0 && errno == EINTR)
		;
}

/*
 * The grandchild: a clean process image for wireguard-go. fabricd is single
 * threaded, so setenv() after fork() is safe here. Never returns.
 */
static void __attribute__((noreturn)) exec_wireguard_go(const char *ifname, int st)
{
	char *argv[] = {WG_GO, (char *)ifname, NULL};
	sigset_t none;
	int fd;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* an ignored disposition survives exec, and Go leaves an ignored SIGHUP alone */
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open("/dev/null", O_RDWR);
	if (chdir("/") < 0 || fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	/* fabricd's sockets must not leak into it; st stays open until exec */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		for (int i = 3; i < 4096; i++)
			fcntl(i, F_SETFD, FD_CLOEXEC);
	}
	/* inherited WG_TUN_FD / WG_UAPI_FD would make it adopt fds it does not have */
	unsetenv("WG_TUN_FD");
	unsetenv("WG_UAPI_FD");
	unsetenv("WG_TUN_NAME_FILE");
	setenv("WG_PROCESS_FOREGROUND", "1", 1);
	setenv("LOG_LEVEL", "error", 1);
	execvp(WG_GO, argv);
	send_msg(st, MSG_EXEC_FAILED, errno);
	_exit(127);
}

/*
 * The intermediate child: a new session, then wireguard-go as its child.
 * While the parent waits for the socket it reports an early exit; it leaves
 * when the parent closes ctl (wireguard-go is then reparented to init), and
 * kills wireguard-go first when the parent sends 'k'.
 */
static void __attribute__((noreturn)) start_intermediate(const char *ifname, int st, int ctl)
{
	int status;
	pid_t pid;

	setsid();
	pid = fork();
	if (pid < 0) {
		send_msg(st, MSG_EXEC_FAILED, errno);
		_exit(1);
	}
	if (pid == 0)
		exec_wireguard_go(ifname, st);
	send_msg(st, MSG_PID, pid);
	for (;;) {
		struct pollfd p = {.fd = ctl, .events = POLLIN};
		int n = poll(&p, 1, STEP_MS);
		char c = 0;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			send_msg(st, MSG_EXITED, status);
			_exit(0);
		}
		if (n <= 0 || (read(ctl, &c, 1) < 0 && errno == EINTR))
			continue;
		if (c == 'k') {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		_exit(0);
	}
}

static int write_pid_file(const char *ifname, pid_t pid)
{
	char path[RUN_PATH_MAX], tmp[RUN_PATH_MAX], line[32];
	int fd, len, ret = 0;

	run_path(path, sizeof(path), ifname, "pid");
	run_path(tmp, sizeof(tmp), ifname, "pid.tmp");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	len = snprintf(line, sizeof(line), "%d\n", (int)pid);
	if (fchmod(fd, 0644) < 0 || write(fd, line, (size_t)len) != len)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static pid_t read_pid_file(const char *ifname)
{
	char path[RUN_PATH_MAX], line[32];
	uint64_t v;
	ssize_t n;
	int fd;

	run_path(path, sizeof(path), ifname, "pid");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return parse_u64(line, INT32_MAX, &v) < 0 || v < 2 ? 0 : (pid_t)v;
}

/* Waits for the socket while reading the intermediate's reports; sets the error text. */
static int wait_ready(const char *ifname, int st, bool *pid_written)
{
	long deadline = now_ms() + START_TIMEOUT_MS;
	char path[RUN_PATH_MAX];
	struct start_msg m;
	int ret;

	while (now_ms() < deadline) {
		struct pollfd p = {.fd = st, .events = POLLIN};

		if (poll(&p, 1, STEP_MS) <= 0) {
			if (*pid_written && wg_uapi_exists(ifname))
				return 0;
			continue;
		}
		if (read(st, &m, sizeof(m)) != sizeof(m)) {
			wg_set_last_error("%s: starting %s failed", ifname, WG_GO);
			return -EPIPE;
		}
		if (m.kind == MSG_PID) {
			ret = write_pid_file(ifname, m.value);
			if (ret < 0) {
				run_path(path, sizeof(path), ifname, "pid");
				wg_set_last_error("%s: cannot write %s: %s", ifname, path,
						  strerror(-ret));
				return ret;
			}
			*pid_written = true;
		} else if (m.kind == MSG_EXEC_FAILED) {
			wg_set_last_error("%s: cannot run %s: %s: install the wireguard-go package",
					  ifname, WG_GO, strerror(m.value));
			return -m.value;
		} else if (WIFSIGNALED(m.value)) {
			wg_set_last_error("%s: %s was killed by signal %d", ifname, WG_GO,
					  WTERMSIG(m.value));
			return -ECHILD;
		} else {
			wg_set_last_error(
			    "%s: %s exited with status %d: is /dev/net/tun available?", ifname,
			    WG_GO, WEXITSTATUS(m.value));
			return -ECHILD;
		}
	}
	run_path(path, sizeof(path), ifname, "sock");
	wg_set_last_error("%s: %s did not answer on %s within %d ms", ifname, WG_GO, path,
			  START_TIMEOUT_MS);
	return -ETIMEDOUT;
}

int wg_uapi_create(const char *ifname)
{
	int st[2] = {-1, -1}, ctl[2] = {-1, -1};
	bool pid_written = false;
	char path[RUN_PATH_MAX];
	pid_t mid = -1;
	int ret;

	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	if (wg_uapi_exists(ifname)) {
		wg_set_last_error("%s: a wireguard-go already runs for it", ifname);
		return -EEXIST;
	}
	if (if_nametoindex(ifname)) {
		wg_set_last_error("%s: a network interface of that name exists and no wireguard-go "
				  "answers for it: remove it or choose another name",
				  ifname);
		return -EEXIST;
	}
	/* ctl is a socket so that 'k' to an intermediate already gone cannot raise SIGPIPE */
	if ((mkdir(WG_UAPI_RUN_DIR, 0755) < 0 && errno != EEXIST) || pipe2(st, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 || (mid = fork()) < 0) {
		ret = -errno;
		wg_set_last_error("%s: cannot start %s: %s", ifname, WG_GO, strerror(-ret));
		goto out;
	}
	if (mid == 0) {
		close(st[0]);
		close(ctl[1]); /* or it would never see the parent close ctl */
		start_intermediate(ifname, st[1], ctl[0]);
	}
	close(st[1]); /* so that a dead intermediate reads as EOF */
	st[1] = -1;
	ret = wait_ready(ifname, st[0], &pid_written);
	if (ret < 0)
		send(ctl[1], "k", 1, MSG_NOSIGNAL);
out:
	for (int i = 0; i < 2; i++) {
		if (st[i] >= 0)
			close(st[i]);
		if (ctl[i] >= 0)
			close(ctl[i]);
	}
	/* with ctl closed the intermediate leaves; wireguard-go is then init's child */
	while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	if (ret < 0 && pid_written) {
		run_path(path, sizeof(path), ifname, "pid");
		unlink(path);
	}
	return ret;
}

static bool same_netns(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/net", &b) < 0)
		return false;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/*
 * Whether pid runs exactly "wireguard-go IFNAME" (from any directory) in our
 * network namespace. A zombie has no command line: it does not match.
 */
static bool is_our_wireguard_go(pid_t pid, const char *ifname)
{
	char path[64], buf[256];
	const char *base;
	size_t len0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	len0 = strlen(buf);
	/* two arguments: "arg0\0arg1\0" and nothing more */
	if (len0 + 1 >= (size_t)n || len0 + strlen(buf + len0 + 1) + 2 != (size_t)n)
		return false;
	base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	return !strcmp(base, WG_GO) && !strcmp(buf + len0 + 1, ifname) && same_netns(pid);
}

static pid_t find_wireguard_go(const char *ifname)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	uint64_t v;

	while (d && !found && (e = readdir(d))) {
		if (parse_u64(e->d_name, INT32_MAX, &v) == 0 && (pid_t)v != getpid() &&
		    is_our_wireguard_go((pid_t)v, ifname))
			found = (pid_t)v;
	}
	if (d)
		closedir(d);
	return found;
}

/* Signals, then waits until it is gone (pidfd readable, or no longer wireguard-go). */
static bool signal_and_wait(pid_t pid, int pidfd, const char *ifname, int sig)
{
	long deadline = now_ms() + STOP_TIMEOUT_MS;

	if (pidfd >= 0)
		pidfd_send_signal(pidfd, sig, NULL, 0);
	else
		kill(pid, sig);
	for (;;) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		struct timespec step = {.tv_nsec = STEP_MS * 1000000L};

		if (pidfd >= 0 ? poll(&p, 1, 0) > 0 : !is_our_wireguard_go(pid, ifname))
			return true;
		if (now_ms() >= deadline)
			return false;
		nanosleep(&step, NULL);
	}
}

/* SIGTERM, a bounded wait, then SIGKILL. 0 when it is gone. */
static int stop_process(pid_t pid, const char *ifname)
{
	/* without pidfds (old kernels, valgrind) the PID is checked on each step instead */
	int pidfd = pidfd_open(pid, 0);
	int ret = 0;

	/* checked again after pidfd_open: a reused PID can no longer be signalled by mistake */
	if (is_our_wireguard_go(pid, ifname) && !signal_and_wait(pid, pidfd, ifname, SIGTERM) &&
	    !signal_and_wait(pid, pidfd, ifname, SIGKILL))
		ret = -ETIMEDOUT;
	waitpid(pid, NULL, WNOHANG); /* reaps it should it be our own child */
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

int wg_uapi_destroy(const char *ifname)
{
	char sock[RUN_PATH_MAX], pidf[RUN_PATH_MAX];
	pid_t pid, target = 0;
	struct stat st;
	bool have_sock;
	int ret;

	if (!wg_ifname_valid(ifname))
		return -EINVAL;
	run_path(sock, sizeof(sock), ifname, "sock");
	run_path(pidf, sizeof(pidf), ifname, "pid");
	have_sock = lstat(sock, &st) == 0;
	pid = read_pid_file(ifname);
	if (pid && is_our_wireguard_go(pid, ifname))
		target = pid;
	else if (have_sock || pid)
		/* no valid PID file: started by someone else, or the file is stale */
		target = find_wireguard_go(ifname);
	if (target) {
		ret = stop_process(target, ifname);
		if (ret < 0) {
			wg_set_last_error("%s: cannot stop %s (pid %d): %s", ifname, WG_GO,
					  (int)target, strerror(-ret));
			return ret;
		}
	}
	unlink(pidf);
	/* wireguard-go removes its socket on SIGTERM; this covers SIGKILL and stale files */
	if (have_sock)
		unlink(sock);
	if (!target) {
		wg_set_last_error("%s: no %s runs for it in this network namespace", ifname, WG_GO);
		return -ENODEV;
	}
	return 0;
}
