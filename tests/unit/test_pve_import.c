// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pve_import.c - Proxmox SDN -> cluster definition, table-driven over the
 * fixtures in tests/fixtures/pve/ (PVE 8 peers, 9.0 OpenFabric + EVPN, 9.2
 * WireGuard fabric). Each case reads one set (pending *.cfg or the deployed
 * .running-config), edits one file by substitution, and names what must be
 * reported and what the definition must hold; every definition produced
 * must load as "fabricd check" loads it. Run from the repository root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/pve_import.h"
#include "definition/pve_running.h"
#include "definition/wgkey.h"
#include "unit.h"

#define DIR "tests/fixtures/pve/"

enum { F_ZONES, F_VNETS, F_SUBNETS, F_CONTROLLERS, F_FABRICS, F_COROSYNC, F_RUNNING, F_N };
static const char *const file_names[F_N] = {
    "sdn/zones.cfg",   "sdn/vnets.cfg", "sdn/subnets.cfg",    "sdn/controllers.cfg",
    "sdn/fabrics.cfg", "corosync.conf", "sdn/.running-config"};

struct tcase {
	const char *name;
	const char *set;
	bool running;	      /* the deployed .running-config instead of the *.cfg */
	bool keys;	      /* a new_key callback (--generate-keys) */
	int file;	      /* which file the substitutions edit */
	const char *subs[10]; /* from, to: up to five pairs */
	int errors;	      /* how many errors, -1: any */
	const char *error;    /* an error containing this */
	const char *warn;     /* a warning containing this */
	const char *json;     /* the definition contains this */
	const char *nojson;   /* ... and not this */
};

/* Set B without its external node: the clean 9.2 cluster. */
#define NO_EXTERNAL                                                                                \
	"\tpeers "                                                                                 \
	"type=external,node=backup,iface=wg0,allowed_ips=\"10.251.0.0/24,10.252.0.0/24\"\n",       \
	    "",                                                                                    \
	    "wireguard_node: wgf_backup\n\tallowed_ips 10.251.0.0/24\n\tendpoint "                 \
	    "backup.example.net:51900\n\tip 10.250.0.9\n",                                         \
	    "wireguard_node: wgf_gone\n"

static const struct tcase cases[] = {
    /* set B as the reference lays it out: one unmappable external node */
    {"9.2 running",
     "pve92",
     true,
     false,
     F_ZONES,
     {NULL},
     1,
     "[wireguard_node: wgf_backup] role",
     "[vxlan: sec] mtu: 1370 kept",
     "\"transport\": \"secure\"",
     "backup"},
    {"9.2 pending",
     "pve92",
     false,
     false,
     F_ZONES,
     {NULL},
     1,
     "fabrics.cfg:35 [wireguard_node: wgf_backup] role: external WireGuard node",
     NULL,
     "\"keepalive\": 25",
     "10.250.0.9"},
    {"9.2 pending zone pub plain",
     "pve92",
     false,
     false,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "[vxlan: pub]: guests had MTU 1450",
     "\"name\": \"pub\",\n      \"transport\": \"plain\"",
     NULL},
    {"9.2 clean",
     "pve92",
     false,
     false,
     F_FABRICS,
     {NO_EXTERNAL},
     1,
     "wgf_gone",
     NULL,
     "\"public_key\": \"cjoBx7KKqGdVr5vfh3wqOtBnahLsnSq4LZIPjxOMLGc=\"",
     NULL},
    {"9.2 interface ip",
     "pve92",
     false,
     false,
     F_FABRICS,
     {NULL},
     -1,
     NULL,
     "[wireguard_node: wgf_hv3] interfaces: the interface's own ip is not imported",
     "\"fabric_address\": \"10.250.0.3\"",
     "10.249.0.3"},
    {"9.2 peer extras",
     "pve92",
     false,
     false,
     F_FABRICS,
     {NULL},
     -1,
     NULL,
     "[wireguard_node: wgf_hv2] peers: peer hv3: endpoint",
     NULL,
     NULL},
    {"keepalive off",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tpersistent_keepalive 25\n", ""},
     1,
     NULL,
     NULL,
     "\"keepalive\": 0",
     NULL},
    {"comment in fabrics.cfg",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"wireguard_node: wgf_hv2\n", "# hv2\nwireguard_node: wgf_hv2\n"},
     -1,
     "fabrics.cfg:14: a comment line",
     NULL,
     NULL,
     NULL},
    {"comment: fabric gone",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"wireguard_node: wgf_hv2\n", "# hv2\nwireguard_node: wgf_hv2\n"},
     -1,
     "[vxlan: sec] fabric: fabric \"wgf\" is not in fabrics.cfg",
     NULL,
     NULL,
     NULL},
    {"asymmetric peers",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tpeers type=internal,node=hv1,node_iface=wg0,iface=wg0\n\tpeers type=internal,node=hv3,"
      "node_iface=wg0,iface=wg0,endpoint",
      "\tpeers type=internal,node=hv3,node_iface=wg0,iface=wg0,endpoint"},
     2,
     "[wireguard_node: wgf_hv1] peers: lists hv2 but hv2 does not list hv1",
     NULL,
     NULL,
     NULL},
    {"two interfaces",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip 10.250.0.1\n", "\tinterfaces name=wg1,listen_port=51821,public_key="
			   "Sf2dQ9rbU8i2c9GsXuQ2CZ9p6x3ZuWcN+yonK+OJ3F8=\n\tip 10.250.0.1\n"},
     2,
     "[wireguard_node: wgf_hv1] interfaces: node \"hv1\" has 2 WireGuard interfaces",
     NULL,
     NULL,
     NULL},
    {"interface name 9 chars",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"interfaces name=wg0,listen_port=51820,public_key=Sf2d",
      "interfaces name=wireguard0,listen_port=51820,public_key=Sf2d"},
     2,
     "[wireguard_node: wgf_hv1] interfaces: needs name (1..8",
     NULL,
     NULL,
     "\"hv1\""},
    {"bad public key",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"public_key=Sf2dQ9rbU8i2c9GsXuQ2CZ9p6x3ZuWcN+yonK+OJ3F8=", "public_key=nope"},
     2,
     "public_key \"nope\" is not a base64 WireGuard key",
     NULL,
     NULL,
     NULL},
    {"other listen port",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"name=wg0,listen_port=51820,public_key=i32T", "name=wg0,listen_port=51999,public_key=i32T"},
     1,
     NULL,
     NULL,
     "\"listen_port\": 51999",
     NULL},
    {"endpoint host name",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tendpoint 203.0.113.12\n", "\tendpoint hv2.lan.example\n"},
     1,
     NULL,
     NULL,
     "\"endpoint\": \"hv2.lan.example:51820\"",
     NULL},
    {"rust duplicate key",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip 10.250.0.2\n", "\tip 10.250.0.2\n\tip 10.250.0.7\n"},
     2,
     "[wireguard_node: wgf_hv2] ip: given 2 times; Proxmox rejects the file",
     NULL,
     NULL,
     NULL},
    {"node ip outside prefix",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip 10.250.0.2\n", "\tip 10.99.0.2\n"},
     2,
     "[wireguard_node: wgf_hv2] ip: \"10.99.0.2\" is not an address inside",
     NULL,
     NULL,
     "\"hv2\""},
    {"no ip_prefix: interface ips",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip_prefix 10.250.0.0/24\n", "",
      "interfaces name=wg0,listen_port=51820,public_key=Sf2d"
      "Q9rbU8i2c9GsXuQ2CZ9p6x3ZuWcN+yonK+OJ3F8=",
      "interfaces name=wg0,listen_port=51820,ip=10.249.0.1/24,public_key=Sf2dQ9rbU8i2c9GsXuQ2CZ9"
      "p6x3ZuWcN+yonK+OJ3F8=",
      "public_key=i32TTagWOLQLkCY2+3CdDU1hUQ3yIyCrw9ovEPb/9VI=",
      "public_key=i32TTagWOLQLkCY2+3CdDU1hUQ3yIyCrw9ovEPb/9VI=,ip=10.249.0.2/24"},
     1,
     NULL,
     NULL,
     "\"prefix\": \"10.249.0.0/24\"",
     NULL},
    {"no ip_prefix: default prefix",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip_prefix 10.250.0.0/24\n", ""},
     1,
     NULL,
     "fabricd uses 10.255.0.0/24",
     "\"fabric_address\": \"10.255.0.3\"",
     NULL},
    {"node missing from fabric",
     "pve92",
     false,
     false,
     F_COROSYNC,
     {"  # hv3 was added later\n", "  node {\n    name: hv4\n    nodeid: 4\n    ring0_addr: "
				   "203.0.113.14\n  }\n"},
     2,
     "hv4: is in corosync.conf but not in WireGuard fabric \"wgf\"",
     NULL,
     NULL,
     "hv4"},
    {"node missing from corosync",
     "pve92",
     false,
     false,
     F_COROSYNC,
     {"  # hv3 was added later\n  node {\n    name: hv3\n    nodeid: 3\n    quorum_votes: 1\n"
      "    ring0_addr: 203.0.113.13\n    ring1_addr: 2001:db8:10::13\n  }\n",
      ""},
     1,
     NULL,
     "hv3: is in WireGuard fabric \"wgf\" but not in corosync.conf (removed from the cluster?)",
     "\"underlay\": \"203.0.113.13\"",
     NULL},
    {"ring0 host name",
     "pve92",
     false,
     false,
     F_COROSYNC,
     {"ring0_addr: 203.0.113.12", "ring0_addr: hv2.lan"},
     1,
     NULL,
     "ring0_addr \"hv2.lan\" is a host name",
     "\"underlay\": \"203.0.113.12\"",
     NULL},
    {"upper-case node collides",
     "pve92",
     false,
     false,
     F_COROSYNC,
     {"name: hv3\n", "name: HV2\n"},
     -1,
     "both \"hv2\" in fabricd",
     NULL,
     NULL,
     NULL},
    /* found by fuzz_pve: a multicast endpoint was written as an underlay check refuses */
    {"multicast endpoint",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"endpoint 203.0.113.11", "endpoint 230.0.113.11"},
     -1,
     "hv1: underlay address 230.0.113.11 (multicast, from its WireGuard endpoint) is not one",
     NULL,
     NULL,
     NULL},
    {"loopback fabric prefix",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"ip_prefix 10.250.0.0/24", "ip_prefix 127.250.0.0/24"},
     -1,
     "ip_prefix: \"127.250.0.0/24\" is not unicast address space of hosts",
     NULL,
     NULL,
     NULL},
    /* a vnet is its bridge's name: Proxmox's "Blue" is not fabricd's "blue" */
    {"upper-case vnet refused",
     "pve92",
     false,
     false,
     F_VNETS,
     {"vnet: green", "vnet: Blue"},
     2,
     "[vnet: Blue]: vnet id has upper-case letters; fabricd names the bridge",
     NULL,
     "\"name\": \"blue\"",
     NULL},
    {"upper-case zone lowered",
     "pve92",
     false,
     false,
     F_ZONES,
     {"vxlan: sec", "vxlan: Sec", "", ""},
     1,
     NULL,
     NULL,
     "\"name\": \"sec\"",
     NULL},
    {"zone restricted to two nodes",
     "pve92",
     false,
     false,
     F_ZONES,
     {"nodes hv1,hv2,hv3", "nodes hv1, hv2"},
     1,
     NULL,
     NULL,
     "\"nodes\": [\n        \"hv1\",\n        \"hv2\"\n      ]",
     NULL},
    {"zone unknown node",
     "pve92",
     false,
     false,
     F_ZONES,
     {"nodes hv1,hv2,hv3", "nodes hv1,hv2,hv3,hv9"},
     1,
     NULL,
     "[vxlan: sec] nodes: \"hv9\" is not a cluster node",
     NULL,
     NULL},
    {"zone mtu above fabricd's",
     "pve92",
     false,
     false,
     F_ZONES,
     {"mtu 1370", "mtu 1400"},
     1,
     NULL,
     "[vxlan: sec] mtu: guests had MTU 1400 under Proxmox; fabricd gives the zone 1390",
     NULL,
     "\"mtu\""},
    {"zone mtu not a number",
     "pve92",
     false,
     false,
     F_ZONES,
     {"mtu 1370", "mtu big"},
     1,
     NULL,
     "\"big\" is not an MTU",
     NULL,
     "\"mtu\""},
    {"peers and fabric",
     "pve92",
     false,
     false,
     F_ZONES,
     {"\tfabric wgf\n", "\tfabric wgf\n\tpeers 203.0.113.11,203.0.113.12\n"},
     1,
     NULL,
     "[vxlan: sec] fabric: both peers and fabric are set",
     NULL,
     NULL},
    {"peer outside the cluster",
     "pve92",
     false,
     false,
     F_ZONES,
     {"203.0.113.13\n", "203.0.113.13,198.51.100.7\n"},
     2,
     "[vxlan: pub] peers: \"198.51.100.7\" is not an address of a cluster node",
     NULL,
     NULL,
     "green"},
    /* peers that are the nodes' WireGuard addresses: Proxmox routes the zone inside WireGuard */
    {"peers are the fabric's addresses",
     "pve92",
     false,
     false,
     F_ZONES,
     {"peers 203.0.113.11,203.0.113.12,203.0.113.13", "peers 10.250.0.1,10.250.0.2 10.249.0.3"},
     1,
     "wgf_backup",
     "[vxlan: pub] peers: the peers are the nodes' addresses in WireGuard fabric \"wgf\"",
     "\"name\": \"pub\",\n      \"transport\": \"secure\"",
     "\"transport\": \"plain\""},
    /* Proxmox builds the zone on every node (no "nodes"): one missing from peers is said */
    {"node of the zone not in its peers",
     "pve92",
     false,
     false,
     F_ZONES,
     {"peers 203.0.113.11,203.0.113.12,203.0.113.13", "peers 203.0.113.11,203.0.113.12"},
     1,
     "wgf_backup",
     "[vxlan: pub] peers: node hv3 is in the zone (Proxmox builds its vnets there) but none of "
     "its addresses is a peer",
     "\"name\": \"pub\",\n      \"transport\": \"plain\",\n      \"nodes\": [\n        \"hv1\",\n "
     "       \"hv2\"\n      ]",
     NULL},
    {"peers mix fabric and underlay addresses",
     "pve92",
     false,
     false,
     F_ZONES,
     {"peers 203.0.113.11,203.0.113.12,203.0.113.13", "peers 10.250.0.1,203.0.113.12"},
     2,
     "[vxlan: pub] peers: 1 peer(s) are nodes' addresses in WireGuard fabric \"wgf\" and 1",
     NULL,
     NULL,
     "green"},
    {"zone without peers or fabric",
     "pve92",
     false,
     false,
     F_ZONES,
     {"\tpeers 203.0.113.11,203.0.113.12,203.0.113.13\n", "\tipam pve\n"},
     2,
     "[vxlan: pub]: VXLAN zone has neither peers nor fabric",
     NULL,
     NULL,
     NULL},
    {"unknown zone key",
     "pve92",
     false,
     false,
     F_ZONES,
     {"\tmtu 1370\n", "\tmtu 1370\n\tcolour red\n"},
     1,
     NULL,
     "[vxlan: sec] colour: unknown key; dropped",
     NULL,
     NULL},
    {"simple zone left to Proxmox",
     "pve92",
     false,
     false,
     F_ZONES,
     {"vxlan: pub\n\tpeers 203.0.113.11,203.0.113.12,203.0.113.13\n", "simple: pub\n"},
     1,
     NULL,
     "[simple: pub]: not a VXLAN zone: Proxmox keeps building it",
     NULL,
     "green"},
    {"vnet without tag",
     "pve92",
     false,
     false,
     F_VNETS,
     {"\ttag 700002\n", ""},
     2,
     "[vnet: green] tag: a VXLAN vnet needs a tag",
     NULL,
     NULL,
     NULL},
    {"duplicate VNI",
     "pve92",
     false,
     false,
     F_VNETS,
     {"tag 700002", "tag 700001"},
     2,
     "[vnet: green] tag: VNI 700001 is also vnet blue's",
     NULL,
     NULL,
     NULL},
    {"vlanaware yes dropped",
     "pve92",
     false,
     false,
     F_VNETS,
     {"\ttag 700001\n", "\ttag 700001\n\tvlanaware yes\n"},
     1,
     NULL,
     "[vnet: blue] vlanaware: \"yes\" is not 1 or 0; dropped",
     "\"blue\"",
     NULL},
    /* isolated guests and fabricd's isolated VXLAN port exchange nothing */
    {"isolate-ports refused",
     "pve92",
     false,
     false,
     F_VNETS,
     {"\ttag 700001\n", "\ttag 700001\n\tisolate-ports 1\n"},
     2, /* and set B's external node */
     "[vnet: blue] isolate-ports: not imported: Proxmox isolates the guests' ports, and "
     "fabricd's VXLAN ports are isolated too",
     NULL,
     NULL,
     NULL},
    {"isolate-ports 0 is none",
     "pve92",
     false,
     false,
     F_VNETS,
     {"\ttag 700001\n", "\ttag 700001\n\tisolate-ports 0\n"},
     1, /* set B's external node */
     NULL,
     NULL,
     "\"blue\"",
     NULL},
    {"long vnet name accepted",
     "pve92",
     false,
     false,
     F_VNETS,
     {"vnet: green", "vnet: toolongname"},
     1,
     NULL,
     NULL,
     "\"toolongname\"",
     NULL},
    {"vnet name over 15",
     "pve92",
     false,
     false,
     F_VNETS,
     {"vnet: green", "vnet: toolongname16chr"},
     2,
     "is not a fabricd vnet name",
     NULL,
     NULL,
     NULL},
    /* named in Proxmox's terms, not by a JSON path of a definition never written */
    {"vnet with a name of fabricd's devices",
     "pve92",
     false,
     false,
     F_VNETS,
     {"vnet: green", "vnet: vx200"},
     2,
     "[vnet: vx200]: vnet id is the name of a device fabricd creates itself (wgfab0, vx<VNI>, "
     "vs<VNI>): rename the vnet in Proxmox",
     NULL,
     NULL,
     NULL},
    /* found by fuzz_pve: "all" passed the import and failed the definition's check */
    {"vnet with a name the kernel refuses",
     "pve92",
     false,
     false,
     F_VNETS,
     {"vnet: green", "vnet: all"},
     2,
     "[vnet: all]: vnet id cannot be an interface name (the kernel refuses \"all\" and "
     "\"default\", and every network namespace has \"lo\"): rename the vnet in Proxmox",
     NULL,
     NULL,
     NULL},
    {"vnet named lo",
     "pve92",
     false,
     false,
     F_VNETS,
     {"vnet: green", "vnet: lo"},
     2,
     "[vnet: lo]: vnet id cannot be an interface name",
     NULL,
     NULL,
     NULL},
    {"no key, no generator",
     "pve92",
     false,
     false,
     F_FABRICS,
     {",public_key=i32TTagWOLQLkCY2+3CdDU1hUQ3yIyCrw9ovEPb/9VI=", ""},
     2,
     "hv2: Proxmox has no WireGuard key for this node",
     NULL,
     NULL,
     "\"hv2\""},
    {"nothing left",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"wireguard_node: wgf_hv2\n", "# hv2\nwireguard_node: wgf_hv2\n"},
     6,
     "corosync.conf: no node could be imported",
     NULL,
     NULL,
     NULL},
    /* found by fuzz_pve: what check requires and Proxmox does not enforce at parse time */
    {"same public key",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"public_key=i32TTagWOLQLkCY2+3CdDU1hUQ3yIyCrw9ovEPb/9VI=",
      "public_key=Sf2dQ9rbU8i2c9GsXuQ2CZ9p6x3ZuWcN+yonK+OJ3F8="},
     2,
     "hv2: has the same WireGuard public key as node hv1",
     NULL,
     NULL,
     "\"hv2\""},
    {"same node ip",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip 10.250.0.2\n", "\tip 10.250.0.1\n"},
     2,
     "hv2: has the same fabric address as node hv1",
     NULL,
     NULL,
     NULL},
    {"node ip is the network",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tip 10.250.0.2\n", "\tip 10.250.0.0\n"},
     2,
     "hv2: fabric address 10.250.0.0 is not a host",
     NULL,
     NULL,
     NULL},
    {"bad endpoint",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tendpoint 203.0.113.12\n", "\tendpoint 203.0.11Q.12\n"},
     2,
     "[wireguard_node: wgf_hv2] endpoint: \"203.0.11Q.12\" is neither an address",
     NULL,
     "\"underlay\": \"203.0.113.12\"",
     "11Q"},
    {"prefix with host bits",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"ip_prefix 10.250.0.0/24", "ip_prefix 10.250.0.20/4"},
     -1,
     "[wireguard_fabric: wgf] ip_prefix: \"10.250.0.20/4\" is not a prefix",
     NULL,
     NULL,
     NULL},
    {"underlay inside the prefix",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"ip_prefix 10.250.0.0/24", "ip_prefix 203.0.113.0/24", "\tip 10.250.0.1\n",
      "\tip 203.0.113.1\n", "\tip 10.250.0.2\n", "\tip 203.0.113.2\n"},
     -1,
     "hv1: underlay 203.0.113.11 is inside the fabric prefix",
     NULL,
     NULL,
     NULL},
    /* set A: PVE 8, peers only, keys generated */
    {"8 running",
     "pve8",
     true,
     true,
     F_ZONES,
     {NULL},
     1,
     "[vnet: trunk1] vlanaware: vlan-aware vnets are not imported",
     "fabricd uses 10.255.0.0/24",
     "\"vni\": 4100",
     "trunk1"},
    {"8 pending mixed separators",
     "pve8",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "zones.cfg:9 [vxlan: lab6] peers: 2001:db8:10::12 is node hv2",
     "\"name\": \"lab6\"",
     NULL},
    {"8 vxlan-port",
     "pve8",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "[vxlan: lab6] vxlan-port: 4790 not imported",
     NULL,
     NULL},
    {"8 lab6 mtu dropped",
     "pve8",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "[vxlan: lab6] mtu: guests had MTU 1430",
     NULL,
     "\"mtu\""},
    {"8 alias",
     "pve8",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "vnets.cfg:4 [vnet: app] alias",
     NULL,
     NULL},
    {"8 clean",
     "pve8",
     false,
     true,
     F_VNETS,
     {"\tvlanaware 1\n", ""},
     0,
     NULL,
     NULL,
     "\"vni\": 4101",
     NULL},
    {"8 without keys",
     "pve8",
     false,
     false,
     F_VNETS,
     {"\tvlanaware 1\n", ""},
     4,
     "give --generate-keys DIR",
     NULL,
     NULL,
     NULL},
    {"8 v6 underlay family",
     "pve8",
     false,
     true,
     F_COROSYNC,
     {"ring0_addr: 203.0.113.13\n    ring1_addr: 2001:db8:10::13", "ring0_addr: 2001:db8:10::13"},
     1,
     /* every node has an IPv6 address and only two an IPv4 one: IPv6, nobody dropped */
     "\"203.0.113.13\" is not an address of a cluster node",
     NULL,
     "\"underlay\": \"2001:db8:10::11\"",
     NULL},
    {"8 the odd node out",
     "pve8",
     false,
     true,
     F_COROSYNC,
     {"ring0_addr: 203.0.113.11\n    ring1_addr: 2001:db8:10::11", "ring0_addr: 203.0.113.11",
      "ring0_addr: 203.0.113.12\n    ring1_addr: 2001:db8:10::12", "ring0_addr: 203.0.113.12",
      "ring0_addr: 203.0.113.13\n    ring1_addr: 2001:db8:10::13", "ring0_addr: 2001:db8:10::13"},
     -1,
     "hv3: has only IPv6 addresses and the other nodes' underlay is IPv4",
     NULL,
     "\"underlay\": \"203.0.113.12\"",
     "2001:db8:10::13"},
    {"9.2 IPv6 endpoint, IPv4 cluster",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"endpoint 203.0.113.11", "endpoint 2001:db8:10::11"},
     1,
     "role: external WireGuard node",
     "hv1: WireGuard endpoint 2001:db8:10::11 is IPv6 and the other nodes' underlay IPv4",
     "\"endpoint\": \"[2001:db8:10::11]:51820\"",
     NULL},
    {"9.2 IPv6 fabric",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"ip_prefix 10.250.0.0/24", "ip6_prefix fd00:250::/64", "\tip 10.250.0.1\n",
      "\tip6 fd00:250::1\n", "\tip 10.250.0.2\n", "\tip6 fd00:250::2\n", "\tip 10.250.0.3\n",
      "\tip6 fd00:250::3\n", "\tip 10.250.0.9\n", "\tip6 fd00:250::9\n"},
     1,
     "role: external WireGuard node",
     NULL,
     "\"fabric_address\": \"fd00:250::3\"",
     "10.250.0"},
    {"9.2 IPv6 fabric, a node without ip6",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"ip_prefix 10.250.0.0/24", "ip6_prefix fd00:250::/64", "\tip 10.250.0.1\n",
      "\tip6 fd00:250::1\n", "\tip 10.250.0.2\n", "\tip6 fd00:250::2\n", "\tip 10.250.0.9\n",
      "\tip6 fd00:250::9\n"},
     -1,
     "hv3: has no fabric address: give the node an \"ip6\" in the WireGuard fabric",
     NULL,
     NULL,
     NULL},
    {"9.2 misspelt keepalive",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\tpersistent_keepalive 25\n", "\tpersistant_keepalive 25\n", "\trole internal\n",
      "\trole internal\n\tcolour blue\n"},
     1,
     NULL,
     "[wireguard_fabric: wgf] persistant_keepalive: not a key of Proxmox's wireguard_fabric "
     "sections",
     NULL,
     NULL},
    {"9.2 unknown node key",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"\trole internal\n", "\trole internal\n\tcolour blue\n"},
     1,
     NULL,
     "[wireguard_node: wgf_hv1] colour: not a key of Proxmox's wireguard_node sections",
     NULL,
     NULL},
    {"9.2 a second WireGuard fabric, unused",
     "pve92",
     false,
     false,
     F_FABRICS,
     {"wireguard_fabric: wgf\n",
      "wireguard_fabric: wgb\n\tip_prefix 10.240.0.0/24\n\nwireguard_node: wgb_hv1\n"
      "\tinterfaces name=wg1,listen_port=51830,public_key=Sf2dQ9rbU8i2c9GsXuQ2CZ9p6x3ZuWcN+"
      "yonK+OJ3F8=\n\tip 10.240.0.1\n\trole internal\n\nwireguard_fabric: wgf\n"},
     1,
     "role: external WireGuard node",
     NULL,
     "\"prefix\": \"10.250.0.0/24\"",
     NULL},
    {"running without its fabrics",
     "pve92",
     true,
     false,
     F_RUNNING,
     {"\"fabrics\":{", "\"unused\":{"},
     -1,
     "fabric \"wgf\" is not in the applied configuration (.running-config (fabrics)): apply "
     "the SDN configuration in Proxmox, or import the pending one (--pending)",
     NULL,
     NULL,
     NULL},
    {"vnet of a zone that does not exist",
     "pve8",
     false,
     true,
     F_VNETS,
     {"\tzone lab\n", "\tzone nope\n"},
     -1,
     NULL,
     "its zone \"nope\" is not in zones.cfg; dropped, as Proxmox does",
     NULL,
     NULL},
    /* set C: 9.0 OpenFabric + EVPN */
    {"9.0 evpn",
     "pve90-evpn",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     "zones.cfg:1 [evpn: tenant]: EVPN zone not imported: its VRF, gateways and exit nodes",
     "[vnet: t1]: not imported",
     "\"s1\"",
     "t1"},
    {"9.0 openfabric plain",
     "pve90-evpn",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "[vxlan: stor] fabric: zone runs over openfabric fabric \"core\"",
     "\"transport\": \"plain\"",
     NULL},
    {"9.0 subnets and controllers",
     "pve90-evpn",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "controllers.cfg:1 [evpn: ctl]: controller not imported: fabricd runs its own BGP EVPN",
     NULL,
     NULL},
    {"9.0 subnet",
     "pve90-evpn",
     false,
     true,
     F_ZONES,
     {NULL},
     1,
     NULL,
     "subnets.cfg:1 [subnet: tenant-10.9.1.0-24]: not imported",
     NULL,
     NULL},
    {"9.0 unknown fabric",
     "pve90-evpn",
     false,
     true,
     F_ZONES,
     {"fabric core", "fabric nope"},
     2,
     "[vxlan: stor] fabric: fabric \"nope\" is not in fabrics.cfg",
     NULL,
     NULL,
     NULL},
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = calloc(1, (size_t)n + 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static char *substitute(char *text, const char *from, const char *to)
{
	char *at = strstr(text, from), *out;
	size_t fl = strlen(from), tl = strlen(to), n = strlen(text);

	if (!at)
		return NULL;
	out = malloc(n - fl + tl + 1);
	memcpy(out, text, (size_t)(at - text));
	memcpy(out + (at - text), to, tl);
	memcpy(out + (at - text) + tl, at + fl, n - (size_t)(at - text) - fl + 1);
	free(text);
	return out;
}

/* Deterministic keys for generated nodes: the name's bytes as the private key. */
static int test_key(void *ctx, const char *node, uint8_t pub[32])
{
	uint8_t priv[32] = {0};

	(void)ctx;
	memcpy(priv, node, strlen(node) < 32 ? strlen(node) : 32);
	wgkey_public(pub, priv);
	return 0;
}

struct loaded {
	struct pve_file files[5];
	struct pve_running running;
	struct corosync_conf cs;
	struct pve_input in;
};

static int load(const struct tcase *t, struct loaded *l, struct diag *d)
{
	static const char *const names[] = {"zones.cfg", "vnets.cfg", "subnets.cfg",
					    "controllers.cfg", "fabrics.cfg"};
	char path[256];
	char *text[F_N];

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < F_N; i++) {
		snprintf(path, sizeof(path), DIR "%s/%s", t->set, file_names[i]);
		text[i] = slurp(path);
		if (!text[i])
			text[i] = strdup("");
		for (int k = 0; i == t->file && k < 10 && t->subs[k]; k += 2) {
			text[i] = substitute(text[i], t->subs[k], t->subs[k + 1]);
			if (!text[i]) {
				CHECK(0, "%s: \"%s\" not in %s", t->name, t->subs[k], path);
				for (int j = 0; j < i; j++)
					free(text[j]);
				return -1;
			}
		}
	}
	for (int i = 0; i < 5; i++) {
		l->files[i].name = names[i];
		l->files[i].dialect = i == F_FABRICS ? PVE_DIALECT_RUST : PVE_DIALECT_PERL;
		pve_file_parse(&l->files[i], text[i], strlen(text[i]), d);
		pve_file_sort(&l->files[i]);
	}
	if (corosync_parse(text[F_COROSYNC], strlen(text[F_COROSYNC]), "corosync.conf", &l->cs,
			   d) == 0)
		l->in.corosync = &l->cs;
	l->in.corosync_name = "corosync.conf";
	if (t->running) {
		CHECK_INT(
		    pve_running_parse(text[F_RUNNING], strlen(text[F_RUNNING]), &l->running, d), 0,
		    "%s: running-config", t->name);
		l->in.zones = &l->running.zones;
		l->in.vnets = &l->running.vnets;
		l->in.subnets = &l->running.subnets;
		l->in.controllers = &l->running.controllers;
		l->in.fabrics = &l->running.fabrics;
	} else {
		l->in.zones = &l->files[0];
		l->in.vnets = &l->files[1];
		l->in.subnets = &l->files[2];
		l->in.controllers = &l->files[3];
		l->in.fabrics = &l->files[4];
	}
	for (int i = 0; i < F_N; i++)
		free(text[i]);
	return 0;
}

static int contains(char **v, size_t n, const char *piece)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(v[i], piece))
			return 1;
	return 0;
}

static void dump(const struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "  error: %s\n", d->msgs[i]);
	for (size_t i = 0; i < d->n_warnings; i++)
		fprintf(stderr, "  warning: %s\n", d->warnings[i]);
}

static void run_case(const struct tcase *t)
{
	struct pve_import_opts opts = {.new_key = t->keys ? test_key : NULL};
	struct pve_import *imp = NULL;
	struct cluster *c = NULL;
	struct loaded l;
	struct diag d, cd;
	char *json = NULL;
	int before = unit_failed;

	diag_init(&d);
	diag_init(&cd);
	if (load(t, &l, &d) < 0)
		goto out;
	CHECK_INT(pve_import_run(&l.in, &opts, &imp, &d), 0, "%s: import runs", t->name);
	json = imp ? pve_import_json(imp) : NULL;
	CHECK(json != NULL, "%s: a definition", t->name);
	if (t->errors >= 0)
		CHECK_INT(d.n, t->errors, "%s: errors", t->name);
	if (t->error)
		CHECK(contains(d.msgs, d.n, t->error), "%s: error \"%s\"", t->name, t->error);
	if (t->warn)
		CHECK(contains(d.warnings, d.n_warnings, t->warn), "%s: warning \"%s\"", t->name,
		      t->warn);
	if (json && t->json)
		CHECK(strstr(json, t->json) != NULL, "%s: has %s", t->name, t->json);
	if (json && t->nojson)
		CHECK(strstr(json, t->nojson) == NULL, "%s: lacks %s", t->name, t->nojson);
	/* what mapped always makes a valid definition (that is what --partial writes) */
	if (json && pve_import_node_count(imp) > 0)
		CHECK_INT(config_load_buffer(json, strlen(json), &c, &cd), 0, "%s: passes check",
			  t->name);
	if (unit_failed != before) {
		dump(&d);
		dump(&cd);
		fprintf(stderr, "%s\n", json ? json : "(no json)");
	}
out:
	free(json);
	cluster_free(c);
	pve_import_free(imp);
	for (int i = 0; i < 5; i++)
		pve_file_free(&l.files[i]);
	pve_running_free(&l.running);
	corosync_free(&l.cs);
	diag_free(&d);
	diag_free(&cd);
}

/* --key-out's lookup: the public key the import used for a node. */
static void test_node_key(void)
{
	struct tcase t = {"node key", "pve92", false, false, F_ZONES, {NULL}, 0, 0, 0, 0, 0};
	struct pve_import_opts opts = {0};
	struct pve_import *imp = NULL;
	const char *pve_name, *iface;
	uint8_t pub[32], want[32];
	struct loaded l;
	struct diag d;

	diag_init(&d);
	if (load(&t, &l, &d) < 0)
		return;
	CHECK_INT(pve_import_run(&l.in, &opts, &imp, &d), 0, "import");
	CHECK_INT(pve_import_node_key(imp, "hv2", &pve_name, &iface, pub), 0, "hv2 key");
	wgkey_from_base64("i32TTagWOLQLkCY2+3CdDU1hUQ3yIyCrw9ovEPb/9VI=", want);
	CHECK(!memcmp(pub, want, 32), "hv2's public key");
	CHECK_STR(iface, "wg0", "interface");
	CHECK_STR(pve_name, "hv2", "Proxmox name");
	CHECK_INT(pve_import_node_key(imp, "backup", &pve_name, &iface, pub), -ENOENT, "external");
	CHECK_INT(pve_import_node_key(imp, "hv9", &pve_name, &iface, pub), -ENOENT, "unknown");
	pve_import_free(imp);
	for (int i = 0; i < 5; i++)
		pve_file_free(&l.files[i]);
	corosync_free(&l.cs);
	diag_free(&d);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	test_node_key();
	return unit_summary("test_pve_import");
}
