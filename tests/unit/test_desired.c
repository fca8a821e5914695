// SPDX-License-Identifier: GPL-2.0-or-later
/* test_desired.c - each example's per-node desired state: names, ports, addresses, MTUs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/desired.h"
#include "unit.h"

struct vnet_case {
	const char *bridge, *vxlan;
	unsigned int port, mtu;
	const char *local;
	size_t n_remotes;
	const char *first_remote;
};

struct node_case {
	const char *file, *node;
	unsigned int fabric_mtu;
	size_t n_peers;
	const char *first_endpoint;
	size_t n_vnets;
	struct vnet_case vnets[5];
};

static const struct node_case cases[] = {
    {"examples/vxlan-3node.json",
     "pve1",
     1440,
     2,
     "198.51.100.12",
     4,
     {{"vnet100", "vx100", 4789, 1390, "198.51.100.11", 2, "198.51.100.12"},
      {"vnet101", "vx101", 4789, 1390, "198.51.100.11", 2, "198.51.100.12"},
      {"vnet200", "vs200", 4790, 1390, "10.255.0.1", 2, "10.255.0.2"},
      /* max policy, plain: 1450, lowered by the zone's mtu 1400 */
      {"vnet300", "vx300", 4789, 1400, "198.51.100.11", 1, "198.51.100.13"}}},
    /* pve2 is not in zone "backup" */
    {"examples/vxlan-3node.json",
     "pve2",
     1440,
     2,
     "198.51.100.11",
     3,
     {{"vnet100", "vx100", 4789, 1390, "198.51.100.12", 2, "198.51.100.11"},
      {"vnet101", "vx101", 4789, 1390, "198.51.100.12", 2, "198.51.100.11"},
      {"vnet200", "vs200", 4790, 1390, "10.255.0.2", 2, "10.255.0.1"}}},
    /* IPv6 underlay, IPv4 fabric: 1420 / 1430 / 1370 */
    {"examples/ipv6-underlay.json",
     "pve1",
     1420,
     2,
     "2001:db8:10::12",
     2,
     {{"vnet100", "vs100", 4790, 1370, "10.255.1.1", 2, "10.255.1.2"},
      {"vnet200", "vx200", 4789, 1370, "2001:db8:10::11", 1, "2001:db8:10::12"}}},
    {"examples/ipv6-underlay.json",
     "pve3",
     1420,
     2,
     "2001:db8:10::11",
     1,
     {{"vnet100", "vs100", 4790, 1370, "10.255.1.3", 2, "10.255.1.1"}}},
    /*
     * IPv4 underlay, pve3 reached at an IPv6 endpoint: every node sizes wgfab0
     * for IPv6 (1420), pve3 too, so each zone has one MTU on every node
     */
    {"tests/fixtures/ipv6-endpoint.json",
     "pve1",
     1420,
     2,
     "198.51.100.12",
     4,
     {{"vnet100", "vx100", 4789, 1370, "198.51.100.11", 2, "198.51.100.12"},
      {"vnet101", "vx101", 4789, 1370, "198.51.100.11", 2, "198.51.100.12"},
      {"vnet200", "vs200", 4790, 1370, "10.255.0.1", 2, "10.255.0.2"},
      {"vnet300", "vx300", 4789, 1400, "198.51.100.11", 1, "198.51.100.13"}}},
    {"tests/fixtures/ipv6-endpoint.json",
     "pve3",
     1420,
     2,
     "198.51.100.11",
     4,
     {{"vnet100", "vx100", 4789, 1370, "198.51.100.13", 2, "198.51.100.11"},
      {"vnet101", "vx101", 4789, 1370, "198.51.100.13", 2, "198.51.100.11"},
      {"vnet200", "vs200", 4790, 1370, "10.255.0.3", 2, "10.255.0.1"},
      {"vnet300", "vx300", 4789, 1400, "198.51.100.13", 1, "198.51.100.11"}}},
    /* jumbo: max plain 8950, max secure 8890, stable with mtu 1500 override */
    {"examples/jumbo-9000.json",
     "pve2",
     8940,
     2,
     "192.0.2.21",
     4,
     {{"ceph-public", "vx9000", 4789, 8950, "192.0.2.22", 2, "192.0.2.21"},
      {"repl", "vs9001", 4790, 8890, "10.255.2.2", 2, "10.255.2.1"},
      {"vnet100", "vs100", 4790, 1500, "10.255.2.2", 2, "10.255.2.1"},
      {"vnet101", "vs101", 4790, 1500, "10.255.2.2", 2, "10.255.2.1"}}},
};

static void check_case(const struct node_case *t)
{
	struct cluster *c = NULL;
	struct node_state s;
	struct diag d;
	char a[IP_ADDR_STRLEN];
	int self;

	diag_init(&d);
	CHECK_INT(config_load_file(t->file, &c, &d), 0, "%s loads", t->file);
	if (!c)
		goto out;
	self = cluster_find_node(c, t->node);
	CHECK(self >= 0, "%s: node %s", t->file, t->node);
	if (self < 0)
		goto out;
	CHECK_INT(desired_build(c, (size_t)self, c->fabric.underlay_mtu, &s, &d), 0, "%s %s",
		  t->file, t->node);
	CHECK(s.mtu_known, "%s: mtu known", t->file);
	CHECK_STR(s.fabric.ifname, "wgfab0", "%s", t->file);
	CHECK_INT(s.fabric.mtu, t->fabric_mtu, "%s %s: fabric mtu", t->file, t->node);
	CHECK_INT(s.fabric.address.len, c->fabric.prefix.len, "%s: address length", t->file);
	CHECK_INT(s.fabric.n_peers, t->n_peers, "%s %s: peers", t->file, t->node);
	CHECK_STR(s.fabric.peers[0].endpoint_host, t->first_endpoint, "%s %s: endpoint", t->file,
		  t->node);
	CHECK_INT(s.fabric.peers[0].allowed_ips[0].len, 32, "%s: allowed ip is a host route",
		  t->file);
	CHECK_INT(s.n_vnets, t->n_vnets, "%s %s: vnets", t->file, t->node);
	for (size_t i = 0; i < s.n_vnets && i < t->n_vnets; i++) {
		const struct desired_vnet *v = &s.vnets[i];
		const struct vnet_case *w = &t->vnets[i];

		CHECK_STR(v->name, w->bridge, "%s %s vnet %zu", t->file, t->node, i);
		CHECK_STR(v->vxlan, w->vxlan, "%s %s %s", t->file, t->node, w->bridge);
		CHECK_INT(v->port, w->port, "%s %s %s: port", t->file, t->node, w->bridge);
		CHECK_INT(v->mtu, w->mtu, "%s %s %s: mtu", t->file, t->node, w->bridge);
		CHECK_STR(ip_addr_str(&v->local, a, sizeof(a)), w->local, "%s %s %s: local",
			  t->file, t->node, w->bridge);
		CHECK_INT(v->n_remotes, w->n_remotes, "%s %s %s: remotes", t->file, t->node,
			  w->bridge);
		if (v->n_remotes)
			CHECK_STR(ip_addr_str(&v->remotes[0], a, sizeof(a)), w->first_remote,
				  "%s %s %s: first remote", t->file, t->node, w->bridge);
	}
	desired_free(&s);
out:
	diag_free(&d);
	cluster_free(c);
}

/* Without an underlay MTU the state has MTUs 0, to be filled from the kernel. */
static void test_unknown_mtu(void)
{
	struct cluster *c = NULL;
	struct node_state s;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_file("examples/minimal-2node.json", &c, &d), 0, "minimal loads");
	if (!c)
		return;
	CHECK(!(c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU), "minimal has no underlay_mtu");
	CHECK_INT(desired_build(c, 0, 0, &s, &d), 0, "build without MTU");
	CHECK(!s.mtu_known, "mtu unknown");
	CHECK_INT(s.fabric.mtu, 0, "fabric mtu unknown");
	CHECK_INT(s.vnets[0].mtu, 0, "vnet mtu unknown");
	CHECK_STR(s.owner, "fabricd:lab", "owner alias");
	desired_free(&s);
	/* the kernel then reports 1500 */
	CHECK_INT(desired_build(c, 1, 1500, &s, &d), 0, "build with MTU");
	CHECK_INT(s.fabric.mtu, 1440, "fabric mtu");
	CHECK_INT(s.vnets[0].mtu, 1390, "plain zone, stable policy");
	CHECK_STR(s.vnets[0].vxlan, "vx100", "plain device name");
	desired_free(&s);
	/*
	 * a small underlay (from the kernel) leaves a zone override above the
	 * computed MTU: built at what this underlay carries, with a warning
	 */
	c->zones[0].flags |= ZONE_HAS_MTU;
	c->zones[0].mtu = 1400;
	CHECK_INT(desired_build(c, 0, 1400, &s, &d), 0, "override above the measured MTU");
	CHECK_INT(d.n, 0, "no error");
	CHECK(d.n_warnings == 1 && strstr(d.warnings[0], "zones[0].mtu: 1400 is above") &&
		  strstr(d.warnings[0], "the zone gets 1290"),
	      "a warning names zones[0].mtu: %s", d.n_warnings ? d.warnings[0] : "");
	CHECK_INT(s.fabric.mtu, 1340, "fabric mtu over a 1400 underlay");
	CHECK_INT(s.vnets[0].mtu, 1290, "the zone at the computed MTU");
	desired_free(&s);
	diag_free(&d);
	/* a measured underlay that leaves a zone under 1280: one warning, at the zone */
	c->zones[0].flags &= ~ZONE_HAS_MTU;
	CHECK_INT(desired_build(c, 0, 1300, &s, &d), 0, "a small measured underlay");
	CHECK(d.n_warnings == 1 && strstr(d.warnings[0], "zones[0]: the zone MTU 1190"),
	      "one warning at zones[0]: %s", d.n_warnings ? d.warnings[0] : "");
	desired_free(&s);
	diag_free(&d);
	/* too small to carry anything: the error says where the number came from */
	CHECK_INT(desired_build(c, 0, 200, &s, &d), -EINVAL, "a tiny measured underlay");
	CHECK(d.n == 1 && strstr(d.msgs[0], "underlay MTU: 200, measured on the routes"),
	      "measured: %s", d.n ? d.msgs[0] : "");
	diag_free(&d);
	c->fabric.flags |= FABRIC_HAS_UNDERLAY_MTU;
	c->fabric.underlay_mtu = 200;
	CHECK_INT(desired_build(c, 0, 200, &s, &d), -EINVAL, "a tiny given underlay");
	CHECK(d.n == 1 && strstr(d.msgs[0], "fabric.underlay_mtu: underlay MTU 200"), "given: %s",
	      d.n ? d.msgs[0] : "");
	diag_free(&d);
	/* with fabric.underlay_mtu given, config_verify has warned (render prints it once) */
	c->fabric.flags |= FABRIC_HAS_UNDERLAY_MTU;
	c->fabric.underlay_mtu = 1300;
	CHECK_INT(desired_build(c, 0, 1300, &s, &d), 0, "a small given underlay");
	CHECK_INT(d.n_warnings, 0, "no second warning");
	desired_free(&s);
	diag_free(&d);
	cluster_free(c);
}

/*
 * EVPN zones (examples/evpn-3node.json): one device vx<VNI> on 4789 in both
 * transports, its VTEP the fabric address when secure; every peer of an EVPN
 * zone has its underlay address in its allowed IPs too.
 */
static void test_evpn(void)
{
	struct cluster *c = NULL;
	struct node_state s;
	struct diag d;
	char a[IP_ADDR_STRLEN];

	diag_init(&d);
	CHECK_INT(config_load_file("examples/evpn-3node.json", &c, &d), 0, "evpn example loads");
	if (!c)
		goto out;
	CHECK_INT(desired_build(c, 0, 1500, &s, &d), 0, "build pve1");
	CHECK(s.carry, "pve1 has EVPN vnets: the carry is wanted");
	for (size_t i = 0; i < s.n_vnets; i++) {
		const struct desired_vnet *v = &s.vnets[i];

		if (!v->evpn)
			continue;
		CHECK(!strcmp(v->vxlan, "vx100") || !strcmp(v->vxlan, "vx200"), "%s: vx<VNI>",
		      v->vxlan);
		CHECK_INT(v->port, 4789, "%s: port 4789", v->vxlan);
		/* the VTEP: the fabric address in the secure zone, the underlay's in the plain */
		CHECK_STR(ip_addr_str(&v->local, a, sizeof(a)),
			  v->transport == TRANSPORT_SECURE ? "10.255.0.1" : "198.51.100.11",
			  "%s: local", v->vxlan);
		CHECK(v->n_remotes == 2 && !v->standby, "%s: two members, no standby", v->vxlan);
		CHECK_STR(ip_addr_str(&v->remotes[0], a, sizeof(a)),
			  v->transport == TRANSPORT_SECURE ? "10.255.0.2" : "198.51.100.12",
			  "%s: the members' VTEPs", v->vxlan);
	}
	CHECK_INT(s.fabric.peers[0].n_allowed_ips, 2, "fabric and underlay address");
	CHECK_STR(ip_addr_str(&s.fabric.peers[0].allowed_ips[1].addr, a, sizeof(a)),
		  "198.51.100.12", "pve2's underlay");
	CHECK_INT(s.fabric.peers[0].allowed_ips[1].len, 32, "host length");
	desired_free(&s);
	/* a static control plane everywhere: no carry, the fabric address alone */
	for (size_t z = 0; z < c->n_zones; z++)
		c->zones[z].control_plane = CONTROL_PLANE_STATIC;
	CHECK_INT(desired_build(c, 0, 1500, &s, &d), 0, "build pve1 static");
	CHECK(!s.carry && s.fabric.peers[0].n_allowed_ips == 1, "static: nothing carried");
	desired_free(&s);
out:
	diag_print(&d, stderr);
	diag_free(&d);
	cluster_free(c);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	test_unknown_mtu();
	test_evpn();
	return unit_summary("test_desired");
}
