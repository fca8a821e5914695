// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_wg_uapi.c - the userspace WireGuard backend. The text protocol is
 * checked without anything running; then, as root, a real wireguard-go is
 * started (and its TUN link marked with the owner alias), configured, read
 * back, compared with `wg show dump`, and stopped; wg_started_by_fabricd()
 * tells it from a wireguard-go started without fabricd.
 *
 * The live part runs in its own network and mount namespaces with a private
 * tmpfs on /run/wireguard, so it never sees or touches the host's devices.
 * Without root it is skipped (noted in the summary); as root it must run.
 */
#define _GNU_SOURCE /* unshare */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/observe.h"
#include "kmod/probe.h"
#include "kinds/link.h"
#include "netlink/nl.h"
#include "unit.h"
#include "wireguard/wg.h"
#include "wireguard/uapi.h"
#include "definition/wgkey.h"

#define IFNAME "wgtest0"
#define OWNER  "fabricd:test"

/* ---- the protocol, no process needed ---- */

static void test_encode_set(void)
{
	static const char want[] =
	    "set=1\n"
	    "private_key=1111111111111111111111111111111111111111111111111111111111111111\n"
	    "listen_port=51820\n"
	    "public_key=2222222222222222222222222222222222222222222222222222222222222222\n"
	    "replace_allowed_ips=true\n"
	    "preshared_key=3333333333333333333333333333333333333333333333333333333333333333\n"
	    "endpoint=[2001:db8::12]:51821\n"
	    "persistent_keepalive_interval=25\n"
	    "allowed_ip=10.255.0.2/32\n"
	    "allowed_ip=fd00::/64\n"
	    "public_key=4444444444444444444444444444444444444444444444444444444444444444\n"
	    "update_only=true\n"
	    "endpoint=192.0.2.7:51820\n"
	    "public_key=5555555555555555555555555555555555555555555555555555555555555555\n"
	    "remove=true\n"
	    "\n";
	struct ip_prefix ips[2];
	struct wg_peer peers[3] = {
	    {.flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_HAS_PRESHARED_KEY | WGPEER_HAS_ENDPOINT |
		      WGPEER_HAS_KEEPALIVE,
	     .keepalive = 25,
	     .n_allowed_ips = 2,
	     .allowed_ips = ips},
	    {.flags = WGPEER_UPDATE_ONLY | WGPEER_HAS_ENDPOINT},
	    {.flags = WGPEER_REMOVE_ME | WGPEER_HAS_KEEPALIVE,
	     .n_allowed_ips = 2,
	     .allowed_ips = ips},
	};
	struct wg_device dev = {.ifname = IFNAME,
				.flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT,
				.listen_port = 51820,
				.n_peers = 3,
				.peers = peers};
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&peers[0].endpoint;
	struct sockaddr_in *sin = (struct sockaddr_in *)&peers[1].endpoint;
	size_t len = 0;
	char *text;
	int err;

	memset(dev.private_key, 0x11, 32);
	memset(peers[0].public_key, 0x22, 32);
	memset(peers[0].preshared_key, 0x33, 32);
	memset(peers[1].public_key, 0x44, 32);
	memset(peers[2].public_key, 0x55, 32);
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(51821);
	inet_pton(AF_INET6, "2001:db8::12", &sin6->sin6_addr);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(51820);
	inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr);
	ip_prefix_parse("10.255.0.2/32", &ips[0]);
	ip_prefix_parse("fd00::/64", &ips[1]);
	text = wg_uapi_encode_set(&dev, &len, &err);
	CHECK(text != NULL, "encode: %d", err);
	if (text) {
		CHECK_STR(text, want, "set text");
		CHECK_INT(len, strlen(want), "length");
		CHECK(!strstr(text, "replace_peers"), "never replace_peers");
	}
	wg_uapi_text_free(text, len);

	peers[1].endpoint.ss_family = AF_UNIX;
	CHECK(wg_uapi_encode_set(&dev, &len, &err) == NULL, "bad endpoint refused");
	CHECK_INT(err, -EINVAL, "bad endpoint");
}

static void test_parse_get(void)
{
	static const char answer[] =
	    "private_key=a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4\n"
	    "listen_port=51820\n"
	    "public_key=2222222222222222222222222222222222222222222222222222222222222222\n"
	    "preshared_key=0000000000000000000000000000000000000000000000000000000000000000\n"
	    "protocol_version=1\n"
	    "endpoint=[fe80::1%1]:51821\n"
	    "last_handshake_time_sec=1700000000\n"
	    "last_handshake_time_nsec=42\n"
	    "tx_bytes=100\n"
	    "rx_bytes=200\n"
	    "persistent_keepalive_interval=25\n"
	    "allowed_ip=10.255.0.2/32\n"
	    "allowed_ip=10.1.2.3/24\n"
	    "public_key=3333333333333333333333333333333333333333333333333333333333333333\n"
	    "preshared_key=4444444444444444444444444444444444444444444444444444444444444444\n"
	    "endpoint=192.0.2.12:51820\n"
	    "persistent_keepalive_interval=0\n"
	    "some_future_key=whatever\n"
	    "errno=0\n"
	    "\n";
	struct wg_device *dev = calloc(1, sizeof(*dev));
	uint8_t pub[32];

	CHECK_INT(wg_uapi_parse_get(answer, dev), 0, "parse get");
	CHECK_INT(dev->flags,
		  WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_PUBLIC_KEY | WGDEVICE_HAS_LISTEN_PORT |
		      WGDEVICE_HAS_FWMARK,
		  "device flags");
	wgkey_public(pub, dev->private_key);
	CHECK(!memcmp(pub, dev->public_key, 32), "public key derived");
	CHECK_INT(dev->listen_port, 51820, "port");
	CHECK_INT(dev->fwmark, 0, "fwmark absent = 0");
	CHECK_INT(dev->n_peers, 2, "peers");
	if (dev->n_peers == 2) {
		struct wg_peer *a = &dev->peers[0], *b = &dev->peers[1];
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->endpoint;

		CHECK_INT(a->flags, WGPEER_HAS_ENDPOINT | WGPEER_HAS_KEEPALIVE, "peer a flags");
		CHECK_INT(s6->sin6_family, AF_INET6, "v6 endpoint");
		CHECK_INT(ntohs(s6->sin6_port), 51821, "port");
		CHECK_INT(s6->sin6_scope_id, 1, "scope");
		CHECK_INT(a->last_handshake_sec, 1700000000, "handshake");
		CHECK_INT(a->last_handshake_nsec, 42, "nsec");
		CHECK_INT(a->tx_bytes, 100, "tx");
		CHECK_INT(a->rx_bytes, 200, "rx");
		CHECK_INT(a->keepalive, 25, "keepalive");
		CHECK_INT(a->n_allowed_ips, 2, "allowed ips");
		if (a->n_allowed_ips == 2)
			CHECK_INT(a->allowed_ips[1].len, 24, "prefix with host bits accepted");
		CHECK_INT(b->flags,
			  WGPEER_HAS_PRESHARED_KEY | WGPEER_HAS_ENDPOINT | WGPEER_HAS_KEEPALIVE,
			  "peer b flags");
		CHECK_INT(b->keepalive, 0, "keepalive off");
		CHECK_INT(b->public_key[0], 0x33, "peer b key");
	}
	wg_device_free(dev);

	static const struct {
		const char *text;
		int ret;
	} bad[] = {
	    {"errno=-22\n\n", -EINVAL},
	    {"errno=22\n\n", -EINVAL},
	    {"listen_port=1\n\n", -EPROTO},		 /* no errno */
	    {"listen_port=70000\nerrno=0\n\n", -EPROTO}, /* out of range */
	    {"private_key=12\nerrno=0\n\n", -EPROTO},
	    {"garbage\nerrno=0\n\n", -EPROTO},
	    {"public_key=2222222222222222222222222222222222222222222222222222222222222222\n"
	     "allowed_ip=10.0.0.1/33\nerrno=0\n\n",
	     -EPROTO},
	    {"public_key=2222222222222222222222222222222222222222222222222222222222222222\n"
	     "endpoint=nohost\nerrno=0\n\n",
	     -EPROTO},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dev = calloc(1, sizeof(*dev));
		CHECK_INT(wg_uapi_parse_get(bad[i].text, dev), bad[i].ret, "%s", bad[i].text);
		wg_device_free(dev);
	}
}

/* ---- live: a real wireguard-go in private namespaces ---- */

static int enter_namespaces(void)
{
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
		perror("unshare");
		return -1;
	}
	/* nothing mounted here may propagate back to the host */
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("mount --make-rprivate /");
		return -1;
	}
	/* no mkdir on the host's /run: without the directory, /run itself gets a private tmpfs */
	if (access("/run/wireguard", F_OK) < 0 &&
	    (mount("fabricd-test", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0 ||
	     mkdir("/run/wireguard", 0755) < 0)) {
		perror("tmpfs /run");
		return -1;
	}
	if (mount("fabricd-test", "/run/wireguard", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") <
	    0) {
		perror("mount tmpfs /run/wireguard");
		return -1;
	}
	return 0;
}

static void add_prefix(struct wg_peer *p, const char *text)
{
	struct ip_prefix ip;

	if (ip_prefix_parse(text, &ip) < 0 || wg_peer_add_allowed_ip(p, &ip) < 0)
		abort();
}

static void set_endpoint(struct wg_peer *p, const char *addr, uint16_t port)
{
	struct ip_addr a;

	if (ip_addr_parse(addr, &a) < 0)
		abort();
	ip_addr_to_sockaddr(&a, port, &p->endpoint);
	p->flags |= WGPEER_HAS_ENDPOINT;
}

static const struct wg_peer *find_peer(const struct wg_device *dev, const uint8_t key[32])
{
	for (size_t i = 0; i < dev->n_peers; i++) {
		if (!memcmp(dev->peers[i].public_key, key, 32))
			return &dev->peers[i];
	}
	return NULL;
}

static bool same_endpoint(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	struct ip_addr x, y;
	uint16_t px = 0, py = 0;

	if (a->ss_family != b->ss_family)
		return false;
	if (!a->ss_family)
		return true;
	ip_addr_from_sockaddr((const struct sockaddr *)a, &x, &px);
	ip_addr_from_sockaddr((const struct sockaddr *)b, &y, &py);
	return ip_addr_equal(&x, &y) && px == py;
}

/* Compares a peer as read back with what was set (allowed IPs as a set). */
static void check_peer(const struct wg_device *got, const struct wg_peer *want, const char *what)
{
	const struct wg_peer *p = find_peer(got, want->public_key);

	CHECK(p != NULL, "%s: peer present", what);
	if (!p)
		return;
	CHECK(same_endpoint(&p->endpoint, &want->endpoint), "%s: endpoint", what);
	CHECK_INT(p->keepalive, want->keepalive, "%s: keepalive", what);
	CHECK_INT(!!(p->flags & WGPEER_HAS_PRESHARED_KEY),
		  !!(want->flags & WGPEER_HAS_PRESHARED_KEY), "%s: psk flag", what);
	if (want->flags & WGPEER_HAS_PRESHARED_KEY)
		CHECK(!memcmp(p->preshared_key, want->preshared_key, 32), "%s: psk", what);
	CHECK_INT(p->n_allowed_ips, want->n_allowed_ips, "%s: allowed IPs", what);
	for (size_t i = 0; i < want->n_allowed_ips; i++) {
		bool found = false;

		for (size_t j = 0; j < p->n_allowed_ips; j++)
			found = found || !memcmp(&p->allowed_ips[j], &want->allowed_ips[i],
						 sizeof(struct ip_prefix));
		CHECK(found, "%s: allowed IP %zu", what, i);
	}
}

/* Runs /usr/bin/wg show IFNAME dump (fork + exec, argv) and returns its output. */
static char *wg_show_dump(void)
{
	static char out[8192];
	size_t have = 0;
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) < 0)
		return NULL;
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"wg", "show", IFNAME, "dump", NULL};

		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv("/usr/bin/wg", argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], out + have, sizeof(out) - 1 - have);

		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fds[0]);
	out[have] = '\0';
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : NULL;
}

static void endpoint_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	struct ip_addr a;
	uint16_t port = 0;
	char addr[IP_ADDR_STRLEN];

	if (!ss->ss_family) {
		snprintf(buf, len, "(none)");
		return;
	}
	ip_addr_from_sockaddr((const struct sockaddr *)ss, &a, &port);
	ip_addr_str(&a, addr, sizeof(addr));
	snprintf(buf, len, a.family == AF_INET6 ? "[%s]:%u" : "%s:%u", addr, port);
}

/* Each line of `wg show dump` must match what wg_get() read. */
static void check_wg_dump(const struct wg_device *dev)
{
	char *out = wg_show_dump(), *line, *save = NULL;
	char priv[WGKEY_B64_LEN], pub[WGKEY_B64_LEN], want[1024], ep[80], ips[512];
	int lines = 0;

	CHECK(out != NULL, "wg show dump ran");
	if (!out)
		return;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (lines++ == 0) {
			wgkey_to_base64(priv, dev->private_key);
			wgkey_to_base64(pub, dev->public_key);
			snprintf(want, sizeof(want), "%s\t%s\t%u\toff", priv, pub,
				 dev->listen_port);
			CHECK_STR(line, want, "wg dump: interface line");
			continue;
		}
		{
			char key[WGKEY_B64_LEN];
			uint8_t raw[32];
			const struct wg_peer *p;
			size_t off = 0;

			snprintf(key, sizeof(key), "%.44s", line);
			if (wgkey_from_base64(key, raw) < 0 || !(p = find_peer(dev, raw))) {
				CHECK(0, "wg dump: unknown peer line %s", line);
				continue;
			}
			if (p->flags & WGPEER_HAS_PRESHARED_KEY)
				wgkey_to_base64(priv, p->preshared_key);
			else
				snprintf(priv, sizeof(priv), "(none)");
			endpoint_text(&p->endpoint, ep, sizeof(ep));
			ips[0] = '\0';
			for (size_t i = 0; i < p->n_allowed_ips; i++) {
				char a[IP_ADDR_STRLEN];

				off += (size_t)snprintf(
				    ips + off, sizeof(ips) - off, "%s%s/%u", i ? "," : "",
				    ip_addr_str(&p->allowed_ips[i].addr, a, sizeof(a)),
				    p->allowed_ips[i].len);
			}
			snprintf(want, sizeof(want), "%s\t%s\t%s\t%s\t0\t0\t0\t", key, priv, ep,
				 p->n_allowed_ips ? ips : "(none)");
			if (p->keepalive)
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%u",
					 p->keepalive);
			else
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "off");
			CHECK_STR(line, want, "wg dump: peer line");
		}
	}
	CHECK_INT(lines, 1 + (int)dev->n_peers, "wg dump: lines");
}

static bool process_alive(pid_t pid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state && state != 'Z';
}

static pid_t read_pid(void)
{
	FILE *f = fopen(WG_UAPI_RUN_DIR "/" IFNAME ".pid", "r");
	int pid = 0;

	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

/* The value of a "Key:\t..." line of /proc/PID/status. */
static unsigned long long status_field(pid_t pid, const char *key, int base)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, strlen(key)))
			v = strtoull(line + strlen(key) + 1, NULL, base);
	}
	if (f)
		fclose(f);
	return v;
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

static void wait_gone(pid_t pid, const char *what)
{
	struct timespec step = {.tv_nsec = 20 * 1000000L};
	int waited = 0;

	/* gone within the bound (it may be an unreaped zombie of init for a moment) */
	while (pid > 0 && process_alive(pid) && waited++ < 100)
		nanosleep(&step, NULL);
	CHECK(pid > 0 && !process_alive(pid), "%s", what);
}

/*
 * A wireguard-go started by someone else (here: by us, directly, in the
 * foreground, with no PID file): it answers, but fabricd did not start it.
 */
static void test_foreign_wireguard_go(void)
{
	struct timespec step = {.tv_nsec = 20 * 1000000L};
	int waited = 0, status;
	pid_t pid = fork();

	if (pid < 0) {
		CHECK(0, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setenv("WG_PROCESS_FOREGROUND", "1", 1);
		setenv("LOG_LEVEL", "error", 1);
		execlp("wireguard-go", "wireguard-go", IFNAME, (char *)NULL);
		_exit(127);
	}
	while (!wg_exists(WG_BACKEND_USERSPACE, IFNAME) && waited++ < 150)
		nanosleep(&step, NULL);
	CHECK(wg_exists(WG_BACKEND_USERSPACE, IFNAME), "our own wireguard-go answers");
	CHECK(access(WG_UAPI_RUN_DIR "/" IFNAME ".pid", F_OK) < 0, "no PID file");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME),
	      "not started by fabricd: no PID file");
	CHECK_INT(wg_create(WG_BACKEND_USERSPACE, IFNAME, OWNER), -EEXIST, "create over it");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME), "still not fabricd's");
	CHECK_INT(wg_destroy(WG_BACKEND_USERSPACE, IFNAME), 0, "destroy it: %s", wg_last_error());
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	CHECK(!wg_exists(WG_BACKEND_USERSPACE, IFNAME), "stopped");
}

static void test_start_failures(void)
{
	char dir[] = "/tmp/test_wg_uapi.XXXXXX", fake[600], path[700];
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	FILE *f;

	/* no wireguard-go on PATH */
	setenv("PATH", "/nonexistent", 1);
	CHECK(!kmod_in_path("wireguard-go"), "not on PATH");
	CHECK_INT(wg_create(WG_BACKEND_USERSPACE, IFNAME, OWNER), -ENOENT, "missing binary");
	CHECK(strstr(wg_last_error(), "cannot run wireguard-go") != NULL, "%s", wg_last_error());
	/* one that exits at once, as wireguard-go does without /dev/net/tun */
	if (mkdtemp(dir)) {
		snprintf(fake, sizeof(fake), "%s/wireguard-go", dir);
		f = fopen(fake, "w");
		if (f) {
			fputs("#!/bin/sh\nexit 3\n", f);
			fclose(f);
		}
		chmod(fake, 0755);
		setenv("PATH", dir, 1);
		CHECK_INT(wg_create(WG_BACKEND_USERSPACE, IFNAME, OWNER), -ECHILD, "died at once");
		CHECK(strstr(wg_last_error(), "exited with status 3: is /dev/net/tun available?"),
		      "%s", wg_last_error());
		CHECK(access(WG_UAPI_RUN_DIR "/" IFNAME ".pid", F_OK) < 0, "no PID file left");
		unlink(fake);
		rmdir(dir);
	}
	snprintf(path, sizeof(path), "%s", saved ? saved : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	free(saved);
}

static void test_live(void)
{
	struct wg_device *change = calloc(1, sizeof(*change)), *got = NULL;
	uint8_t priv[32];
	struct wg_peer *p;
	pid_t pid;
	int ret;

	CHECK(kmod_in_path("wireguard-go"), "wireguard-go is installed");
	CHECK(!wg_exists(WG_BACKEND_USERSPACE, IFNAME), "nothing yet");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME), "not started yet");
	CHECK_INT(wg_destroy(WG_BACKEND_USERSPACE, IFNAME), -ENODEV, "destroy nothing");
	test_start_failures();
	CHECK_INT(wg_create(WG_BACKEND_USERSPACE, IFNAME, ""), -EINVAL, "empty owner mark");
	CHECK_INT(wg_create(WG_BACKEND_USERSPACE, IFNAME, NULL), -EINVAL, "no owner mark");
	CHECK(access(WG_UAPI_RUN_DIR "/" IFNAME ".pid", F_OK) < 0, "nothing started for it");

	ret = wg_create(WG_BACKEND_USERSPACE, IFNAME, OWNER);
	CHECK_INT(ret, 0, "create: %s", wg_last_error());
	if (ret)
		goto out;
	pid = read_pid();
	CHECK(pid > 0, "PID file written");
	CHECK(process_alive(pid), "wireguard-go runs");
	{
		char path[64], comm[32] = "";
		FILE *f;
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		CHECK_STR(comm, "wireguard-go\n", "comm");
		CHECK(stat(WG_UAPI_RUN_DIR "/" IFNAME ".pid", &st) == 0 &&
			  (st.st_mode & 07777) == 0644,
		      "PID file mode 0644");
		/*
		 * detached: not our child, a process group of its own (no terminal
		 * signal meant for us), SIGHUP ignored; but our session, so the
		 * scheduler does not make it an autogroup of its own
		 */
		CHECK(status_field(pid, "PPid:", 10) != (unsigned long long)getpid(),
		      "reparented away from us");
		CHECK(getpgid(pid) != getpgid(0), "own process group");
		CHECK(getsid(pid) == getsid(0), "our session");
		CHECK(status_field(pid, "SigIgn:", 16) & 1, "SIGHUP ignored");
	}
	CHECK(wg_exists(WG_BACKEND_USERSPACE, IFNAME), "exists");
	CHECK(wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME), "started by fabricd");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_KERNEL, IFNAME), "kernel backend: never");
	{
		struct link_obs l;

		CHECK(find_link(IFNAME, &l), "TUN link");
		CHECK_STR(l.kind, "tun", "wireguard-go's link");
		CHECK_STR(l.alias, OWNER, "owner mark set after start");
	}
	CHECK_INT(wg_create(WG_BACKEND_USERSPACE, IFNAME, OWNER), -EEXIST, "create twice");

	/* private key, listen port and three peers */
	snprintf(change->ifname, sizeof(change->ifname), IFNAME);
	wgkey_generate(change->private_key);
	change->listen_port = 51820;
	change->flags = WGDEVICE_HAS_PRIVATE_KEY | WGDEVICE_HAS_LISTEN_PORT;
	for (int i = 0; i < 3; i++) {
		p = wg_device_add_peer(change);
		wgkey_generate(priv);
		wgkey_public(p->public_key, priv);
		p->flags = WGPEER_REPLACE_ALLOWEDIPS | WGPEER_HAS_KEEPALIVE;
		p->keepalive = (uint16_t)(i ? 25 : 0);
	}
	set_endpoint(&change->peers[0], "192.0.2.12", 51820);
	add_prefix(&change->peers[0], "10.255.0.2/32");
	set_endpoint(&change->peers[1], "2001:db8::13", 51821);
	add_prefix(&change->peers[1], "10.255.0.3/32");
	add_prefix(&change->peers[1], "fd00:255::3/128");
	add_prefix(&change->peers[1], "10.3.0.0/16");
	set_endpoint(&change->peers[2], "198.51.100.14", 51820);
	add_prefix(&change->peers[2], "10.255.0.4/32");
	change->peers[2].flags |= WGPEER_HAS_PRESHARED_KEY;
	wgkey_generate(change->peers[2].preshared_key);
	ret = wg_set(WG_BACKEND_USERSPACE, change);
	CHECK_INT(ret, 0, "set: %s", wg_last_error());

	ret = wg_get(WG_BACKEND_USERSPACE, IFNAME, &got);
	CHECK_INT(ret, 0, "get: %s", wg_last_error());
	if (got) {
		uint8_t pub[32];

		wgkey_public(pub, change->private_key);
		CHECK(!memcmp(got->private_key, change->private_key, 32), "private key");
		CHECK(!memcmp(got->public_key, pub, 32), "public key");
		CHECK_INT(got->listen_port, 51820, "listen port");
		CHECK_INT(got->n_peers, 3, "peers");
		check_peer(got, &change->peers[0], "peer 0");
		check_peer(got, &change->peers[1], "peer 1");
		check_peer(got, &change->peers[2], "peer 2");
		check_wg_dump(got);
		wg_device_free(got);
		got = NULL;
	}

	/* change one peer: new endpoint and keepalive, only that peer changes */
	{
		struct wg_device one = {.n_peers = 1};
		struct wg_peer upd = {.flags = WGPEER_UPDATE_ONLY | WGPEER_HAS_KEEPALIVE,
				      .keepalive = 5};
		struct wg_peer ghost = {.flags = WGPEER_UPDATE_ONLY | WGPEER_HAS_KEEPALIVE,
					.keepalive = 7};

		snprintf(one.ifname, sizeof(one.ifname), IFNAME);
		memcpy(upd.public_key, change->peers[0].public_key, 32);
		set_endpoint(&upd, "192.0.2.99", 51822);
		one.peers = &upd;
		CHECK_INT(wg_set(WG_BACKEND_USERSPACE, &one), 0, "update: %s", wg_last_error());
		/* UPDATE_ONLY never creates a peer */
		memset(ghost.public_key, 0x42, 32);
		one.peers = &ghost;
		CHECK_INT(wg_set(WG_BACKEND_USERSPACE, &one), 0, "update unknown peer");
		change->peers[0].endpoint = upd.endpoint;
		change->peers[0].keepalive = 5;
		ret = wg_get(WG_BACKEND_USERSPACE, IFNAME, &got);
		CHECK_INT(ret, 0, "get after update");
		if (got) {
			CHECK_INT(got->n_peers, 3, "no peer created by UPDATE_ONLY");
			check_peer(got, &change->peers[0], "updated peer 0");
			check_peer(got, &change->peers[1], "peer 1 unchanged");
			check_peer(got, &change->peers[2], "peer 2 unchanged");
			wg_device_free(got);
			got = NULL;
		}

		/* remove one peer, the others stay */
		struct wg_peer rm = {.flags = WGPEER_REMOVE_ME};

		memcpy(rm.public_key, change->peers[1].public_key, 32);
		one.peers = &rm;
		CHECK_INT(wg_set(WG_BACKEND_USERSPACE, &one), 0, "remove: %s", wg_last_error());
		ret = wg_get(WG_BACKEND_USERSPACE, IFNAME, &got);
		CHECK_INT(ret, 0, "get after remove");
		if (got) {
			CHECK_INT(got->n_peers, 2, "one peer fewer");
			CHECK(find_peer(got, change->peers[1].public_key) == NULL, "peer 1 gone");
			check_peer(got, &change->peers[0], "peer 0 kept");
			check_peer(got, &change->peers[2], "peer 2 kept");
			check_wg_dump(got);
			wg_device_free(got);
			got = NULL;
		}
	}
	/* a stale PID file naming another process: destroy must find the real one */
	{
		FILE *f = fopen(WG_UAPI_RUN_DIR "/" IFNAME ".pid", "w");

		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	CHECK(!wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME),
	      "a PID file naming another process");
	ret = wg_destroy(WG_BACKEND_USERSPACE, IFNAME);
	CHECK_INT(ret, 0, "destroy: %s", wg_last_error());
	wait_gone(pid, "wireguard-go stopped");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME), "false after destroy");
	CHECK(access(WG_UAPI_RUN_DIR "/" IFNAME ".sock", F_OK) < 0, "socket removed");
	CHECK(access(WG_UAPI_RUN_DIR "/" IFNAME ".pid", F_OK) < 0, "PID file removed");
	CHECK(!wg_exists(WG_BACKEND_USERSPACE, IFNAME), "exists no more");
	CHECK_INT(wg_destroy(WG_BACKEND_USERSPACE, IFNAME), -ENODEV, "destroy twice");

	/* started by someone else (no PID file): found through /proc and stopped */
	ret = wg_create(WG_BACKEND_USERSPACE, IFNAME, OWNER);
	CHECK_INT(ret, 0, "create again: %s", wg_last_error());
	pid = read_pid();
	CHECK(wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME), "started by fabricd again");
	unlink(WG_UAPI_RUN_DIR "/" IFNAME ".pid");
	CHECK(!wg_started_by_fabricd(WG_BACKEND_USERSPACE, IFNAME), "PID file gone: not ours");
	CHECK_INT(wg_destroy(WG_BACKEND_USERSPACE, IFNAME), 0, "destroy without PID file: %s",
		  wg_last_error());
	wait_gone(pid, "stopped without PID file");
	CHECK(!wg_exists(WG_BACKEND_USERSPACE, IFNAME), "gone");
	test_foreign_wireguard_go();
out:
	wg_device_free(got);
	wg_device_free(change);
}

int main(void)
{
	test_encode_set();
	test_parse_get();
	if (geteuid() != 0) {
		unit_skip("test_wg_uapi", "not root: the live wireguard-go part");
		return unit_summary("test_wg_uapi");
	}
	if (enter_namespaces() < 0) {
		CHECK(0, "cannot enter private namespaces");
		return unit_summary("test_wg_uapi");
	}
	test_live();
	return unit_summary("test_wg_uapi");
}
