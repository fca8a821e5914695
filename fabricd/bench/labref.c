// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * labref.c - the reference lab of `fabricd bench --reference`, built with
 * ip, bridge, wg and wireguard-go as shell scripts (kept in the lab's
 * directory while it runs, printed with --verbose):
 *
 *   host:  keys (wg genkey, mode 0600; never on a command line), lo up
 *          everywhere, the switch bridge and both nodes' eth0 veths, created
 *          straight inside their namespaces (ip -n NS ... netns PEER)
 *   n1/n2: in the node's own network and mount namespaces (its private
 *          /run/wireguard): wgfab0 (wireguard-go or `ip link add type
 *          wireguard`, as the fabricd lab uses), wg set, the VXLAN devices
 *          and their bridges, the all-zeros FDB entry towards the other node
 *   host:  the guests' veths on the bridges
 *
 * The addresses, VNIs, ports and MTUs are the fabricd lab's (bench/labnet.c,
 * the definition it writes, and the MTUs fabricd's apply computed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "bench/labref.h"
#include "bench/sample.h"

/* what bench/labnet.c's definition and fabricd's apply give (IPv4 underlay, 1500) */
#define REF_FABRIC_MTU (LAB_UNDERLAY_MTU - 60)
#define REF_ZONE_MTU   (REF_FABRIC_MTU - 50)

struct script {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void add(struct script *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct script *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt,
			      ap);
		va_end(ap);
		if (n < 0) {
			s->oom = true;
			return;
		}
		if (s->buf && s->len + (size_t)n < s->cap) {
			s->len += (size_t)n;
			return;
		}
		size_t cap = (s->cap + (size_t)n + 1) * 2;
		char *b = realloc(s->buf, cap);

		if (!b) {
			s->oom = true;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
}

static void host_underlay(const struct bench_lab *lab, struct script *s)
{
	add(s, "umask 077\n");
	for (int n = 0; n < LAB_NODES; n++)
		add(s, "wg genkey > %s/ref-n%d.key\nwg pubkey < %s/ref-n%d.key > %s/ref-n%d.pub\n",
		    lab->dir, n + 1, lab->dir, n + 1, lab->dir, n + 1);
	for (int i = 0; i < LAB_N_NS; i++)
		add(s, "ip -n %s link set lo up\n", lab->ns[i]);
	add(s, "ip -n %s link add br0 mtu %d type bridge\nip -n %s link set br0 up\n",
	    lab->ns[LAB_SW], LAB_UNDERLAY_MTU, lab->ns[LAB_SW]);
	for (int n = 0; n < LAB_NODES; n++) {
		const char *node = lab->ns[LAB_N1 + n], *sw = lab->ns[LAB_SW];

		add(s,
		    "ip -n %s link add eth0 mtu %d type veth peer name %sn%d mtu %d netns %s\n"
		    "ip -n %s link set %sn%d master br0 up\n"
		    "ip -n %s addr add 192.0.2.%d/24 dev eth0\n"
		    "ip -n %s link set eth0 up\n",
		    node, LAB_UNDERLAY_MTU, lab->id, n + 1, LAB_UNDERLAY_MTU, sw, sw, lab->id,
		    n + 1, node, 11 + n, node);
	}
}

/* One vnet on node n: VXLAN device, bridge, head-end entry to the other node. */
static void node_vnet(struct script *s, const char *bridge, const char *vx, unsigned int vni,
		      const char *local, const char *remote, unsigned int port, unsigned int mtu)
{
	add(s,
	    "ip link add %s mtu %u type bridge\n"
	    "ip link add %s mtu %u type vxlan id %u local %s dstport %u\n"
	    "ip link set %s master %s\n"
	    "ip link set %s up\n"
	    "ip link set %s up\n"
	    "bridge fdb append 00:00:00:00:00:00 dev %s dst %s\n",
	    bridge, mtu, vx, mtu, vni, local, port, vx, bridge, vx, bridge, vx, remote);
}

static void node_script(const struct bench_lab *lab, int n, struct script *s)
{
	int peer = 1 - n;
	char local[32], remote[32], flocal[32], fremote[32];

	snprintf(local, sizeof(local), "192.0.2.%d", 11 + n);
	snprintf(remote, sizeof(remote), "192.0.2.%d", 11 + peer);
	snprintf(flocal, sizeof(flocal), "10.255.0.%d", 1 + n);
	snprintf(fremote, sizeof(fremote), "10.255.0.%d", 1 + peer);
	if (lab->backend == WG_BACKEND_KERNEL)
		add(s, "ip link add wgfab0 type wireguard\n");
	else /* as fabricd starts it: its own log level; it daemonizes by itself */
		add(s, "LOG_LEVEL=error wireguard-go wgfab0\n");
	add(s,
	    "wg set wgfab0 private-key %s/ref-n%d.key listen-port 51820 peer \"$(cat "
	    "%s/ref-n%d.pub)\" endpoint %s:51820 allowed-ips %s/32 persistent-keepalive 25\n"
	    "ip link set wgfab0 mtu %u\n"
	    "ip addr add %s/24 dev wgfab0\n"
	    "ip link set wgfab0 up\n",
	    lab->dir, n + 1, lab->dir, peer + 1, remote, fremote, lab->fabric_mtu, flocal);
	node_vnet(s, "bplain", "vx100", LAB_PLAIN_VNI, local, remote, 4789, lab->zone_mtu);
	node_vnet(s, "bsecure", "vs200", LAB_SECURE_VNI, flocal, fremote, 4790, lab->zone_mtu);
}

static void host_guests(const struct bench_lab *lab, struct script *s)
{
	static const struct {
		const char *guest_if, *tap, *bridge, *net;
	} legs[] = {{"ethp", "tapp", "bplain", "10.100.0."},
		    {"eths", "taps", "bsecure", "10.200.0."}};

	for (int n = 0; n < LAB_NODES; n++) {
		const char *node = lab->ns[LAB_N1 + n], *guest = lab->ns[LAB_G1 + n];

		for (size_t i = 0; i < sizeof(legs) / sizeof(legs[0]); i++)
			add(s,
			    "ip -n %s link add %s mtu %u type veth peer name %s mtu %u netns %s\n"
			    "ip -n %s link set %s master %s up\n"
			    "ip -n %s addr add %s%d/24 dev %s\n"
			    "ip -n %s link set %s up\n",
			    guest, legs[i].guest_if, lab->zone_mtu, legs[i].tap, lab->zone_mtu,
			    node, node, legs[i].tap, legs[i].bridge, guest, legs[i].net, n + 1,
			    legs[i].guest_if, guest, legs[i].guest_if);
	}
}

/* Writes s to DIR/name and runs it with sh -ex in where's namespaces; 0 or -1 (logged). */
static int run_script(const struct bench_lab *lab, enum lab_where where, const char *name,
		      struct script *s)
{
	char path[128], log_path[128];
	char *argv[] = {"sh", "-ex", path, NULL}, *text;
	int fd, lfd, status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s.sh", lab->dir, name);
	snprintf(log_path, sizeof(log_path), "%s/%s.log", lab->dir, name);
	fd = s->oom ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, s->buf, s->len) != (ssize_t)s->len || close(fd) < 0) {
		log_error("bench: cannot write the reference script %s: %s", path,
			  s->oom ? "out of memory" : strerror(errno));
		return -1;
	}
	if (lab->verbose)
		fprintf(stderr, "bench: reference lab, %s (%s):\n%s", name,
			where == LAB_HOST ? "host" : lab->ns[where], s->buf);
	lfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid = lfd < 0 ? -errno : lab_spawn(lab, where, argv, lfd, lfd);
	if (lfd >= 0)
		close(lfd);
	status = pid < 0 ? (int)pid : lab_wait(pid, 60000);
	if (status == 0)
		return 0;
	if (bench_stop)
		return -1;
	text = bench_read_text(log_path);
	log_error("bench: the reference lab's script %s failed (%s %d); its trace:\n%s", path,
		  status < 0 ? "error" : "status", status < 0 ? -status : WEXITSTATUS(status),
		  text ? text : "(no output)");
	free(text);
	return -1;
}

int labref_build(struct bench_lab *lab)
{
	struct script s[4] = {0};
	int ret = -1;

	if (!lab->fabric_mtu)
		lab->fabric_mtu = REF_FABRIC_MTU;
	if (!lab->zone_mtu)
		lab->zone_mtu = REF_ZONE_MTU;
	host_underlay(lab, &s[0]);
	node_script(lab, 0, &s[1]);
	node_script(lab, 1, &s[2]);
	host_guests(lab, &s[3]);
	if (run_script(lab, LAB_HOST, "reference-underlay", &s[0]) == 0 &&
	    run_script(lab, LAB_N1, "reference-n1", &s[1]) == 0 &&
	    run_script(lab, LAB_N2, "reference-n2", &s[2]) == 0 &&
	    run_script(lab, LAB_HOST, "reference-guests", &s[3]) == 0)
		ret = bench_stop ? -1 : 0;
	for (int i = 0; i < 4; i++)
		free(s[i].buf);
	return ret;
}
