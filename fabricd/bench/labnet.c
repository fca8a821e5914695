// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * labnet.c - the bench lab's links and its fabric: veth pairs created
 * directly inside their namespaces (IFLA_NET_NS_FD for the peer, so no link
 * of the lab is ever in the host's namespace), addresses, the switch bridge,
 * a definition with fresh keys, fabricd's own apply on each node and the
 * guests on the vnet bridges that apply built.
 */
#define _GNU_SOURCE /* setns */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/labnet.h"
#include "engine/session.h"
#include "kinds/bridge.h"
#include "definition/desired.h"
#include "kinds/ifaddr.h"
#include "kinds/link.h"
#include "base/log.h"
#include "netlink/nl.h"
#include "definition/wgkey.h"

#define SWITCH_BRIDGE "br0"
#define PLAIN_BRIDGE  "bplain"
#define SECURE_BRIDGE "bsecure"

static const char *const node_names[LAB_NODES] = {"n1", "n2"};

int labnet_nl_open_in(int net_fd, struct nl_sock *s)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), ret;

	if (self < 0)
		return -errno;
	if (setns(net_fd, CLONE_NEWNET) < 0) {
		ret = -errno;
		close(self);
		return ret;
	}
	ret = nl_open(s, NETLINK_ROUTE);
	if (setns(self, CLONE_NEWNET) < 0) {
		/* never carry on in the wrong namespace */
		log_error("bench: cannot return to the host's network namespace: %s",
			  strerror(errno));
		abort();
	}
	close(self);
	return ret;
}

static int fail(const struct bench_lab *lab, enum lab_where where, const char *what,
		const struct nl_sock *s, int err)
{
	char buf[384];

	if (bench_stop)
		return -1; /* interrupted: bench/bench.c says so */
	log_error("bench: %s in %s: %s", what, lab->ns[where],
		  s ? nl_strerror(s, err, buf, sizeof(buf)) : strerror(-err));
	return -1;
}

static int ifindex_of(struct nl_sock *s, const char *name)
{
	struct link_table t = {0};
	const struct link_obs *l;
	int idx = -ENODEV;

	if (link_dump(s, &t) == 0 && (l = link_find(&t, name)))
		idx = l->ifindex;
	link_table_free(&t);
	return idx;
}

static unsigned int mtu_of(struct nl_sock *s, const char *name)
{
	struct link_table t = {0};
	const struct link_obs *l;
	unsigned int mtu = 0;

	if (link_dump(s, &t) == 0 && (l = link_find(&t, name)))
		mtu = l->mtu;
	link_table_free(&t);
	return mtu;
}

/* veth name (here) <-> peer (in the namespace peer_fd), both with mtu. */
static int veth_create(struct nl_sock *s, const char *name, const char *peer, int peer_fd,
		       unsigned int mtu)
{
	/* zeroed: libmnl 1.0.4 (Debian 12) leaves attribute padding as it finds it */
	char buf[NL_MSG_BUF] = {0};
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info, *data, *pinfo;

	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	/* the peer is an ifinfomsg followed by its own attributes */
	pinfo = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)peer_fd);
	mnl_attr_nest_end(nlh, pinfo);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return nl_request(s, nlh, NULL, NULL);
}

/* Up, and enslaved to master when master is not NULL. */
static int link_up(struct nl_sock *s, const char *name, const char *master)
{
	struct link_change c = {.mask = LINK_SET_UP};
	char buf[NL_MSG_BUF] = {0};
	struct nlmsghdr *nlh;
	int idx = ifindex_of(s, name);

	if (idx < 0)
		return idx;
	if (master) {
		c.mask |= LINK_SET_MASTER;
		c.master = ifindex_of(s, master);
		if (c.master < 0)
			return c.master;
	}
	nlh = nl_msg_start(s, buf, RTM_NEWLINK, 0);
	link_put_change(nlh, idx, NULL, &c);
	return nl_request(s, nlh, NULL, NULL);
}

static int addr_add(struct nl_sock *s, const char *dev, const char *cidr)
{
	char buf[NL_MSG_BUF] = {0}, text[64];
	struct ip_prefix p;
	struct nlmsghdr *nlh;
	char *slash;
	int idx = ifindex_of(s, dev);

	if (idx < 0)
		return idx;
	snprintf(text, sizeof(text), "%s", cidr);
	slash = strchr(text, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	if (ip_addr_parse(text, &p.addr) < 0)
		return -EINVAL;
	p.len = (uint8_t)atoi(slash + 1);
	nlh = nl_msg_start(s, buf, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	ifaddr_put(nlh, idx, &p);
	return nl_request(s, nlh, NULL, NULL);
}

static int make_switch(const struct bench_lab *lab, struct nl_sock *sw)
{
	char buf[NL_MSG_BUF] = {0};
	struct nlmsghdr *nlh = nl_msg_start(sw, buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	int ret;

	bridge_put_create(nlh, SWITCH_BRIDGE, LAB_UNDERLAY_MTU);
	ret = nl_request(sw, nlh, NULL, NULL);
	return ret < 0 ? fail(lab, LAB_SW, "create bridge " SWITCH_BRIDGE, sw, ret) : 0;
}

/* Node eth0 <-> switch port IDnN on br0; the underlay address. */
static int make_underlay(const struct bench_lab *lab, int n, struct nl_sock *node,
			 struct nl_sock *sw)
{
	char port[IFNAMSIZ], cidr[32];
	int ret;

	snprintf(port, sizeof(port), "%s%s", lab->id, node_names[n]);
	snprintf(cidr, sizeof(cidr), "192.0.2.%d/24", 11 + n);
	ret = veth_create(node, "eth0", port, lab->ns_fd[LAB_SW], LAB_UNDERLAY_MTU);
	if (ret < 0)
		return fail(lab, LAB_N1 + n, "create veth eth0", node, ret);
	ret = link_up(sw, port, SWITCH_BRIDGE);
	if (ret < 0)
		return fail(lab, LAB_SW, "attach the node port to " SWITCH_BRIDGE, sw, ret);
	ret = addr_add(node, "eth0", cidr);
	if (ret == 0)
		ret = link_up(node, "eth0", NULL);
	return ret < 0 ? fail(lab, LAB_N1 + n, "configure eth0", node, ret) : 0;
}

/* Fresh keys (0600 files, never printed) and the definition naming both nodes. */
static int write_definition(const struct bench_lab *lab)
{
	char pub[LAB_NODES][WGKEY_B64_LEN];
	json_t *def = NULL, *nodes = json_array();
	int ret = -1;

	for (int n = 0; n < LAB_NODES; n++) {
		uint8_t priv[WGKEY_LEN], pubkey[WGKEY_LEN];
		char b64[WGKEY_B64_LEN];
		int fd, err;
		ssize_t w;

		err = wgkey_generate(priv);
		if (err < 0) {
			log_error("bench: cannot generate a WireGuard key: %s", strerror(-err));
			goto out;
		}
		wgkey_public(pubkey, priv);
		wgkey_to_base64(pub[n], pubkey);
		wgkey_to_base64(b64, priv);
		explicit_bzero(priv, sizeof(priv));
		b64[WGKEY_B64_LEN - 1] = '\n'; /* replaces the NUL: 44 characters and a newline */
		fd = open(lab->key[n], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		w = fd >= 0 ? write(fd, b64, sizeof(b64)) : -1;
		explicit_bzero(b64, sizeof(b64));
		if (fd < 0 || w != (ssize_t)sizeof(b64) || close(fd) < 0) {
			log_error("bench: cannot write the key file %s: %s", lab->key[n],
				  strerror(errno));
			goto out;
		}
		json_array_append_new(nodes, json_pack("{s:s, s:s+, s:s+, s:s}", "name",
						       node_names[n], "underlay", "192.0.2.1",
						       n ? "2" : "1", "fabric_address", "10.255.0.",
						       n ? "2" : "1", "public_key", pub[n]));
	}
	def =
	    json_pack("{s:i, s:s, s:{s:s, s:i, s:i, s:i}, s:o, s:[{s:s, s:s, s:[{s:s, s:i}]}, "
		      "{s:s, s:s, s:[{s:s, s:i}]}]}",
		      "version", 1, "cluster", lab->id, "fabric", "prefix", "10.255.0.0/24",
		      "listen_port", 51820, "keepalive", 25, "underlay_mtu", LAB_UNDERLAY_MTU,
		      "nodes", json_incref(nodes), "zones", "name", "plain", "transport", "plain",
		      "vnets", "name", PLAIN_BRIDGE, "vni", LAB_PLAIN_VNI, "name", "secure",
		      "transport", "secure", "vnets", "name", SECURE_BRIDGE, "vni", LAB_SECURE_VNI);
	if (!def || json_dump_file(def, lab->config, JSON_INDENT(2)) < 0) {
		log_error("bench: cannot write the definition %s", lab->config);
		goto out;
	}
	ret = 0;
out:
	json_decref(def);
	json_decref(nodes);
	return ret;
}

/* In the node's namespaces: exactly `fabricd apply -c DEF -n NODE --key-file KEY`. */
static int apply_in_node(const struct bench_lab *lab, void *arg)
{
	int n = *(int *)arg;
	struct options o = {
	    .config = lab->config,
	    .node = node_names[n],
	    .key_file = lab->key[n],
	    .wg_backend =
		lab->backend == WG_BACKEND_KERNEL ? WG_CHOICE_KERNEL : WG_CHOICE_USERSPACE,
	    .grace = 30,
	};
	int fd;

	if (!lab->verbose) {
		/* "apply n1: 9 created, ..." is noise here; errors still go to stderr */
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, 1);
	}
	return session_apply_once(&o) == 0 ? 0 : 1;
}

/* The guest on node n: ethp on the plain bridge, eths on the secure one. */
static int make_guest(const struct bench_lab *lab, int n, struct nl_sock *node,
		      struct nl_sock *guest)
{
	static const struct {
		const char *guest_if, *tap, *bridge, *net;
	} legs[] = {
	    {"ethp", "tapp", PLAIN_BRIDGE, "10.100.0."},
	    {"eths", "taps", SECURE_BRIDGE, "10.200.0."},
	};
	enum lab_where g = LAB_G1 + n;

	for (size_t i = 0; i < sizeof(legs) / sizeof(legs[0]); i++) {
		unsigned int mtu = mtu_of(node, legs[i].bridge);
		char cidr[32];
		int ret;

		if (!mtu) {
			log_error("bench: node n%d has no bridge %s after apply: see the errors of "
				  "`fabricd apply` above",
				  n + 1, legs[i].bridge);
			return -1;
		}
		/* as a hypervisor does: the tap and the guest NIC at the bridge's MTU */
		ret =
		    veth_create(guest, legs[i].guest_if, legs[i].tap, lab->ns_fd[LAB_N1 + n], mtu);
		if (ret < 0)
			return fail(lab, g, "create the guest NIC", guest, ret);
		ret = link_up(node, legs[i].tap, legs[i].bridge);
		if (ret < 0)
			return fail(lab, LAB_N1 + n, "attach the guest tap", node, ret);
		snprintf(cidr, sizeof(cidr), "%s%d/24", legs[i].net, n + 1);
		ret = addr_add(guest, legs[i].guest_if, cidr);
		if (ret == 0)
			ret = link_up(guest, legs[i].guest_if, NULL);
		if (ret < 0)
			return fail(lab, g, "configure the guest NIC", guest, ret);
	}
	return 0;
}

int labnet_build(struct bench_lab *lab)
{
	struct nl_sock s[LAB_N_NS];
	struct timespec t0, t1;
	int ret = -1, err;

	memset(s, 0, sizeof(s));
	for (int i = 0; i < LAB_N_NS; i++) {
		err = labnet_nl_open_in(lab->ns_fd[i], &s[i]);
		if (err < 0) {
			fail(lab, i, "open a netlink socket", NULL, err);
			goto out;
		}
		err = link_up(&s[i], "lo", NULL);
		if (err < 0) {
			fail(lab, i, "bring lo up", &s[i], err);
			goto out;
		}
	}
	if (make_switch(lab, &s[LAB_SW]) < 0 || link_up(&s[LAB_SW], SWITCH_BRIDGE, NULL) < 0)
		goto out;
	for (int n = 0; n < LAB_NODES; n++) {
		if (make_underlay(lab, n, &s[LAB_N1 + n], &s[LAB_SW]) < 0)
			goto out;
	}
	if (write_definition(lab) < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int n = 0; n < LAB_NODES && !bench_stop; n++) {
		err = lab_run_in(lab, LAB_N1 + n, apply_in_node, &n, 60000);
		if (err && bench_stop)
			goto out; /* interrupted: bench/bench.c says so */
		if (err) {
			log_error(
			    "bench: `fabricd apply` on node %s (namespace %s) failed (%s %d); "
			    "its errors are above",
			    node_names[n], lab->ns[LAB_N1 + n], err < 0 ? "error" : "exit",
			    err < 0 ? -err : err);
			goto out;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	lab->apply_seconds =
	    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (int n = 0; n < LAB_NODES && !bench_stop; n++) {
		if (make_guest(lab, n, &s[LAB_N1 + n], &s[LAB_G1 + n]) < 0)
			goto out;
	}
	lab->fabric_mtu = mtu_of(&s[LAB_N1], FABRIC_IFNAME);
	lab->zone_mtu = mtu_of(&s[LAB_N1], SECURE_BRIDGE);
	if (mtu_of(&s[LAB_N1], PLAIN_BRIDGE) != lab->zone_mtu)
		log_warn("bench: the plain and secure bridges have different MTUs (%u, %u)",
			 mtu_of(&s[LAB_N1], PLAIN_BRIDGE), lab->zone_mtu);
	ret = bench_stop ? -1 : 0;
out:
	for (int i = 0; i < LAB_N_NS; i++)
		nl_close(&s[i]);
	return ret;
}
