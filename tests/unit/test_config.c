// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_config.c - the definition loader, table-driven. Each case edits a
 * valid base definition by substitution (or gives a whole text) and names the
 * result: ok, or the JSON path and a piece of the message of one error.
 * Run from the repository root (the examples are loaded by relative path).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "definition/config.h"
#include "unit.h"

#define K1 "t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31Q="
#define K2 "CXmRQWxEZ/Ip0OBIkUEY9l845AwSoxglz2nf2WfBQgs="
#define K3 "oT0zKXEx4tThGhDsMxXEouarKAUC9pxhPmhTWncTW2k="

static const char base[] =
    "{\"version\": 1, \"cluster\": \"lab\",\n"
    " \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820},\n"
    " \"nodes\": [\n"
    "  {\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": \"10.255.0.1\","
    " \"public_key\": \"" K1 "\"},\n"
    "  {\"name\": \"pve2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": \"10.255.0.2\","
    " \"public_key\": \"" K2 "\"},\n"
    "  {\"name\": \"pve3\", \"underlay\": \"192.0.2.13\", \"fabric_address\": \"10.255.0.3\","
    " \"public_key\": \"" K3 "\"}],\n"
    " \"zones\": [\n"
    "  {\"name\": \"tenant-a\", \"transport\": \"secure\","
    " \"vnets\": [{\"name\": \"vnet100\", \"vni\": 100}]},\n"
    "  {\"name\": \"tenant-b\", \"transport\": \"plain\", \"nodes\": [\"pve1\", \"pve2\"],"
    " \"vnets\": [{\"name\": \"vnet200\", \"vni\": 200}]}]}\n";

/* Handy anchors in the base for substitutions. */
#define FABRIC_END "\"listen_port\": 51820}"
#define NODE0	   "{\"name\": \"pve1\","
#define NODE1	   "{\"name\": \"pve2\","
#define ZONE0	   "{\"name\": \"tenant-a\","
#define ZONE1	   "{\"name\": \"tenant-b\","
#define VNET0	   "{\"name\": \"vnet100\","
#define MTU(n)	   FABRIC_END, "\"listen_port\": 51820, \"underlay_mtu\": " #n "}"

struct tcase {
	const char *name;
	const char *subs[6]; /* from, to pairs applied in turn to the base */
	const char *text;    /* a whole definition instead of the base */
	const char *path;    /* NULL: must load; else an error starting with "path: " */
	const char *msg;     /* ... and containing this */
	const char *warn;    /* a warning containing this */
};

/* subs: from, to pairs applied in turn to the base */
/* clang-format off */
#define OK(name, ...)               {name, {__VA_ARGS__}, NULL, NULL, NULL, NULL}
#define BAD(name, path, msg, ...)   {name, {__VA_ARGS__}, NULL, path, msg, NULL}
#define WARN(name, warn, ...)       {name, {__VA_ARGS__}, NULL, NULL, NULL, warn}
#define TEXT(name, text, path, msg) {name, {NULL}, text, path, msg, NULL}
/* clang-format on */

#define A10	"aaaaaaaaaa"
#define A100	A10 A10 A10 A10 A10 A10 A10 A10 A10 A10
#define OPEN10	"[[[[[[[[[["
#define CLOSE10 "]]]]]]]]]]"
#define OPEN40	OPEN10 OPEN10 OPEN10 OPEN10
#define CLOSE40 CLOSE10 CLOSE10 CLOSE10 CLOSE10

static const struct tcase cases[] = {
    OK("base", NULL),
    /* version */
    BAD("version 2", "version", "not supported", "\"version\": 1", "\"version\": 2"),
    BAD("version string", "version", "\"1\"", "\"version\": 1", "\"version\": \"1\""),
    OK("version 1.0", "\"version\": 1", "\"version\": 1.0"),
    BAD("version 1.5", "version", "1.5 is not supported", "\"version\": 1", "\"version\": 1.5"),
    BAD("version missing", "version", "missing", "\"version\": 1, ", ""),
    /* cluster name */
    OK("cluster ok", "\"lab\"", "\"lab-2\""),
    BAD("cluster upper", "cluster", "not a valid cluster name", "\"lab\"", "\"Lab\""),
    BAD("cluster dash", "cluster", "\"-lab\"", "\"lab\"", "\"-lab\""),
    OK("cluster 63", "\"lab\"",
       "\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk\""),
    BAD("cluster 64", "cluster", "at most 63 bytes", "\"lab\"",
	"\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl\""),
    BAD("cluster missing", "cluster", "missing", "\"cluster\": \"lab\",", ""),
    BAD("cluster integer", "cluster", "give a string", "\"lab\"", "7"),
    /* unknown and secret keys */
    BAD("unknown top", "colour",
	"unknown key; remove it (allowed: version, cluster, fabric, nodes, zones, pve_sdn_dir)",
	"\"version\": 1,", "\"version\": 1, \"colour\": 1,"),
    BAD("unknown fabric", "fabric.mtu", "unknown key", FABRIC_END,
	"\"listen_port\": 51820, \"mtu\": 1500}"),
    BAD("unknown node", "nodes[1].privte_key", "unknown key; remove it (allowed: name, underlay",
	NODE1, "{\"privte_key\": 1, \"name\": \"pve2\","),
    BAD("unknown zone", "zones[0].vlan", "unknown key", ZONE0,
	"{\"vlan\": 5, \"name\": \"tenant-a\","),
    BAD("unknown vnet", "zones[0].vnets[0].vlan_id", "allowed: name, vni", VNET0,
	"{\"vlan_id\": 5, \"name\": \"vnet100\","),
    /* a path is cut at 255 bytes, as it always was (CONFIG_PATH_LEN) */
    BAD("long key", "zones[0].vnets[0]." A100 A100 A10 A10 A10 "aaaaaaa", "unknown key", VNET0,
	"{\"" A100 A100 A10 A10 A10 A10 A10 A10 "\": 5, \"name\": \"vnet100\","),
    BAD("did you mean", "nodes[0].underlya", "did you mean \"underlay\"", NODE0,
	"{\"underlya\": \"x\", \"name\": \"pve1\","),
    BAD("dotted key quoted", "[\"a.b\"]", "unknown key", "\"version\": 1,",
	"\"version\": 1, \"a.b\": 1,"),
    BAD("private key in node", "nodes[0].private_key", "/etc/fabricd/private.key (mode 0600)",
	NODE0, "{\"private_key\": \"x\", \"name\": \"pve1\","),
    BAD("PrivateKey top", "PrivateKey", "never belong in the cluster definition", "\"version\": 1,",
	"\"version\": 1, \"PrivateKey\": \"x\","),
    BAD("preshared key", "nodes[1].preshared_key", "never belong", NODE1,
	"{\"preshared_key\": \"x\", \"name\": \"pve2\","),
    BAD("private in fabric", "fabric.private_key_file", "never belong", FABRIC_END,
	"\"listen_port\": 51820, \"private_key_file\": \"/k\"}"),
    /* required keys and types */
    BAD("fabric missing", "fabric", "missing",
	" \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820},\n", ""),
    BAD("fabric array", "fabric", "is an array; give an object",
	"{\"prefix\": \"10.255.0.0/24\", " FABRIC_END, "[]"),
    BAD("prefix missing", "fabric.prefix", "missing", "\"prefix\": \"10.255.0.0/24\", ", ""),
    BAD("listen_port missing", "fabric.listen_port", "missing", ", " FABRIC_END, "}"),
    BAD("listen_port string", "fabric.listen_port",
	"\"51820\" is a string; give an integer 1..65535", "51820", "\"51820\""),
    OK("listen_port 51820.0", "51820", "51820.0"),
    BAD("listen_port real", "fabric.listen_port",
	"51820.5 is not a whole number; give an integer 1..65535", "51820", "51820.5"),
    BAD("keepalive bool", "fabric.keepalive", "true is a boolean", FABRIC_END,
	"\"listen_port\": 51820, \"keepalive\": true}"),
    BAD("nodes missing", "nodes", "missing", "\"nodes\"", "\"nodez\""),
    TEXT("nodes empty",
	 "{\"version\": 1, \"cluster\": \"x\", \"fabric\": {\"prefix\": "
	 "\"10.0.0.0/24\", \"listen_port\": 1}, \"nodes\": []}",
	 "nodes", "is empty"),
    TEXT("nodes object",
	 "{\"version\": 1, \"cluster\": \"x\", \"fabric\": {\"prefix\": "
	 "\"10.0.0.0/24\", \"listen_port\": 1}, \"nodes\": {}}",
	 "nodes", "give an array"),
    BAD("node is string", "nodes[1]", "\"pve2\" is a string; give an object", NODE1,
	"\"pve2\", {\"name\": \"pve2\","),
    BAD("node name missing", "nodes[1].name", "missing", NODE1, "{"),
    BAD("node name null", "nodes[1].name", "null is no value; give a string", NODE1,
	"{\"name\": null,"),
    BAD("underlay missing", "nodes[1].underlay", "missing", "\"underlay\": \"192.0.2.12\", ", ""),
    BAD("fabric_address missing", "nodes[2].fabric_address", "missing",
	"\"fabric_address\": \"10.255.0.3\",", ""),
    BAD("public_key missing", "nodes[0].public_key", "add the node's WireGuard public key",
	"\"public_key\": \"" K1 "\"", "\"listen_port\": 51820"),
    TEXT("zones empty",
	 "{\"version\": 1, \"cluster\": \"x\", \"fabric\": {\"prefix\": "
	 "\"10.0.0.0/24\", \"listen_port\": 1}, \"nodes\": [{\"name\": \"a\", \"underlay\": "
	 "\"192.0.2.1\", \"fabric_address\": \"10.0.0.1\", \"public_key\": \"" K1 "\"}], "
	 "\"zones\": []}",
	 NULL, NULL),
    TEXT("zones missing",
	 "{\"version\": 1, \"cluster\": \"x\", \"fabric\": {\"prefix\": "
	 "\"10.0.0.0/24\", \"listen_port\": 1}, \"nodes\": [{\"name\": \"a\", \"underlay\": "
	 "\"192.0.2.1\", \"fabric_address\": \"10.0.0.1\", \"public_key\": \"" K1 "\"}]}",
	 NULL, NULL),
    BAD("zones object", "zones", "give an array", "\"zones\"", "\"zones\": {}, \"zonez\""),
    BAD("zone name missing", "zones[1].name", "missing", ZONE1, "{"),
    BAD("zone transport missing", "zones[0].transport", "missing", "\"transport\": \"secure\",",
	""),
    BAD("zone vnets missing", "zones[1].vnets", "missing",
	"\"vnets\": [{\"name\": \"vnet200\", \"vni\": 200}]", "\"mtu\": 1300"),
    OK("zone vnets empty", "[{\"name\": \"vnet200\", \"vni\": 200}]", "[]"),
    BAD("vnet not object", "zones[1].vnets[0]", "200 is an integer",
	"[{\"name\": \"vnet200\", \"vni\": 200}]", "[200]"),
    BAD("vnet name missing", "zones[0].vnets[0].name", "missing", VNET0, "{"),
    BAD("vnet vni missing", "zones[1].vnets[0].vni", "missing", ", \"vni\": 200", ""),
    TEXT("top level array", "[1, 2]", "(top level)", "is an array"),
    TEXT("empty", " \n", "<input>", "is empty; a definition is one JSON object"),
    TEXT("top level null", "null", "(top level)", "is null; a definition is one JSON object"),
    TEXT("top level string", "\"x\"", "(top level)", "is a string; a definition is one JSON"),
    /* names */
    BAD("node name upper", "nodes[0].name", "\"PVE1\" is not a valid node name", "\"pve1\",",
	"\"PVE1\","),
    BAD("node name underscore", "nodes[1].name", "\"pve_2\"", "\"pve2\",", "\"pve_2\","),
    OK("node name digit first", "\"pve3\",", "\"3pve\","),
    BAD("node name empty", "nodes[1].name", "\"\" is not a valid", "\"pve2\",", "\"\","),
    BAD("node name 64", "nodes[2].name", "64 bytes; node names are at most 63", "\"pve3\",",
	"\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl\","),
    BAD("node name escaped", "nodes[2].name", "\"pve\\x1b[31m\"", "\"pve3\",",
	"\"pve\\u001b[31m\","),
    BAD("zone name upper", "zones[0].name", "not a valid zone name", "\"tenant-a\"",
	"\"Tenant-A\""),
    OK("zone name 63", "\"tenant-a\"",
       "\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk\""),
    OK("vnet name 15", "\"vnet100\"", "\"abcdefghijklmno\""),
    BAD("vnet name 16", "zones[0].vnets[0].name", "at most 15 bytes", "\"vnet100\"",
	"\"abcdefghijklmnop\""),
    BAD("vnet name dot", "zones[0].vnets[0].name", "not a valid vnet name", "\"vnet100\"",
	"\"vnet.100\""),
    BAD("vnet name reserved vx", "zones[0].vnets[0].name", "fabricd creates itself", "\"vnet100\"",
	"\"vx100\""),
    BAD("vnet name reserved wg", "zones[1].vnets[0].name", "fabricd creates itself", "\"vnet200\"",
	"\"wgfab0\""),
    BAD("vnet name all", "zones[0].vnets[0].name", "the kernel refuses", "\"vnet100\"", "\"all\""),
    BAD("vnet name default", "zones[0].vnets[0].name", "cannot be an interface name", "\"vnet100\"",
	"\"default\""),
    BAD("vnet name lo", "zones[1].vnets[0].name", "every network namespace has", "\"vnet200\"",
	"\"lo\""),
    OK("vnet name alls ok", "\"vnet100\"", "\"alls\""),
    OK("vnet name vxlan ok", "\"vnet100\"", "\"vxlan100\""),
    /* VNI */
    BAD("vni 0", "zones[0].vnets[0].vni", "0 is out of range; give an integer 1..16777215",
	"\"vni\": 100", "\"vni\": 0"),
    OK("vni 1", "\"vni\": 100", "\"vni\": 1"),
    OK("vni max", "\"vni\": 100", "\"vni\": 16777215"),
    BAD("vni too big", "zones[0].vnets[0].vni", "16777216 is out of range", "\"vni\": 100",
	"\"vni\": 16777216"),
    BAD("vni negative", "zones[0].vnets[0].vni", "out of range", "\"vni\": 100", "\"vni\": -1"),
    BAD("vni string", "zones[0].vnets[0].vni", "is a string", "\"vni\": 100", "\"vni\": \"100\""),
    /* a real with no fraction is an integer, as JSON Schema counts it; the same range */
    OK("vni 100.0", "\"vni\": 100", "\"vni\": 100.0"),
    OK("vni 1e2", "\"vni\": 100", "\"vni\": 1e2"),
    BAD("vni 100.5", "zones[0].vnets[0].vni", "100.5 is not a whole number; give an integer",
	"\"vni\": 100", "\"vni\": 100.5"),
    BAD("vni 0.0", "zones[0].vnets[0].vni", "0.0 is out of range", "\"vni\": 100", "\"vni\": 0.0"),
    BAD("vni 16777216.0", "zones[0].vnets[0].vni", "16777216.0 is out of range", "\"vni\": 100",
	"\"vni\": 16777216.0"),
    BAD("vni 1e300", "zones[0].vnets[0].vni", "is out of range", "\"vni\": 100", "\"vni\": 1e300"),
    /* uniqueness */
    BAD("dup node name", "nodes[2].name", "\"pve1\" is also the name of nodes[0]", "\"pve3\",",
	"\"pve1\","),
    BAD("dup underlay", "nodes[2].underlay",
	"\"192.0.2.11\" is also the underlay address of nodes[0]", "192.0.2.13", "192.0.2.11"),
    /* inside the prefix, but no host's: 126.0.0.0/7 holds 127/8 */
    BAD("fabric address loopback", "nodes[0].fabric_address",
	"\"127.0.0.1\" (loopback) cannot be a node's address", "10.255.0.0/24", "126.0.0.0/7",
	"\"10.255.0.1\"", "\"127.0.0.1\""),
    BAD("dup fabric address", "nodes[2].fabric_address", "also the fabric address of nodes[1]",
	"\"10.255.0.3\"", "\"10.255.0.2\""),
    BAD("dup public key", "nodes[2].public_key", "also the public key of nodes[0]", "\"" K3 "\"",
	"\"" K1 "\""),
    BAD("dup zone name", "zones[1].name", "also the name of zones[0]", "\"tenant-b\"",
	"\"tenant-a\""),
    BAD("dup vnet name", "zones[1].vnets[0].name", "also the name of zones[0].vnets[0]",
	"\"vnet200\"", "\"vnet100\""),
    BAD("dup vni across zones", "zones[1].vnets[0].vni", "100 is also the VNI of zones[0].vnets[0]",
	"\"vni\": 200", "\"vni\": 100"),
    BAD("dup vni in zone", "zones[0].vnets[1].vni", "also the VNI of zones[0].vnets[0]",
	"{\"name\": \"vnet100\", \"vni\": 100}",
	"{\"name\": \"vnet100\", \"vni\": 100}, {\"name\": \"vnet101\", \"vni\": 100}"),
    /* addresses */
    BAD("fabric outside prefix", "nodes[2].fabric_address",
	"\"10.255.1.3\" is outside fabric.prefix", "\"10.255.0.3\"", "\"10.255.1.3\""),
    BAD("fabric wrong family", "nodes[2].fabric_address", "is IPv6 but fabric.prefix",
	"\"10.255.0.3\"", "\"fd00::3\""),
    BAD("fabric network address", "nodes[2].fabric_address", "network address", "\"10.255.0.3\"",
	"\"10.255.0.0\""),
    BAD("fabric broadcast", "nodes[2].fabric_address", "broadcast address", "\"10.255.0.3\"",
	"\"10.255.0.255\""),
    OK("fabric .254 ok", "\"10.255.0.3\"", "\"10.255.0.254\""),
    TEXT("fabric /31 both ends",
	 "{\"version\": 1, \"cluster\": \"p2p\", \"fabric\": "
	 "{\"prefix\": \"10.255.0.0/31\", \"listen_port\": 51820}, \"nodes\": [{\"name\": \"a\", "
	 "\"underlay\": \"192.0.2.1\", \"fabric_address\": \"10.255.0.0\", \"public_key\": \"" K1
	 "\"}, {\"name\": \"b\", \"underlay\": \"192.0.2.2\", \"fabric_address\": \"10.255.0.1\", "
	 "\"public_key\": \"" K2 "\"}]}",
	 NULL, NULL),
    BAD("fabric v6 prefix", "nodes[2].fabric_address",
	"is IPv4 but fabric.prefix \"fd00:255::/64\" is IPv6", "10.255.0.0/24", "fd00:255::/64",
	"\"10.255.0.1\"", "\"fd00:255::1\"", "\"10.255.0.2\"", "\"fd00:255::ffff:ffff:ffff:ffff\""),
    BAD("fabric v6 network", "nodes[0].fabric_address", "network address", "10.255.0.0/24",
	"fd00:255::/64", "\"10.255.0.1\"", "\"fd00:255::\"", "\"10.255.0.2\"", "\"fd00:255::2\""),
    BAD("prefix host bits", "fabric.prefix",
	"has host bits set; give the network address, \"10.255.0.0/24\"", "10.255.0.0/24",
	"10.255.0.1/24"),
    BAD("prefix no length", "fabric.prefix", "no prefix length", "10.255.0.0/24", "10.255.0.0"),
    BAD("prefix bad length", "fabric.prefix", "not an IP prefix", "10.255.0.0/24", "10.255.0.0/33"),
    BAD("underlay mixed family", "nodes[1].underlay",
	"\"2001:db8::12\" is IPv6 but nodes[0].underlay is IPv4; all underlay addresses",
	"\"192.0.2.12\"", "\"2001:db8::12\""),
    OK("underlay all v6", "\"192.0.2.11\"", "\"2001:db8::11\"", "\"192.0.2.12\"",
       "\"2001:db8::12\"", "\"192.0.2.13\"", "\"2001:db8::13\""),
    BAD("underlay prefix", "nodes[0].underlay",
	"is a prefix; give the address alone, e.g. \"192.0.2.11\"", "\"192.0.2.11\"",
	"\"192.0.2.11/24\""),
    BAD("underlay name", "nodes[0].underlay", "not an IP address", "\"192.0.2.11\"",
	"\"pve1.example.net\""),
    BAD("fabric_address prefix", "nodes[0].fabric_address", "is a prefix", "\"10.255.0.1\"",
	"\"10.255.0.1/32\""),
    BAD("underlay inside prefix", "nodes[0].underlay", "inside fabric.prefix", "\"192.0.2.11\"",
	"\"10.255.0.200\""),
    /* zone members */
    BAD("member unknown", "zones[1].nodes[1]",
	"\"pve9\" is not a node of this cluster; use one of: pve1, pve2, pve3",
	"[\"pve1\", \"pve2\"]", "[\"pve1\", \"pve9\"]"),
    BAD("member twice", "zones[1].nodes[1]", "listed twice", "[\"pve1\", \"pve2\"]",
	"[\"pve1\", \"pve1\"]"),
    BAD("members empty", "zones[1].nodes", "is empty", "[\"pve1\", \"pve2\"]", "[]"),
    BAD("member not string", "zones[1].nodes[1]", "2 is an integer", "[\"pve1\", \"pve2\"]",
	"[\"pve1\", 2]"),
    OK("members one", "[\"pve1\", \"pve2\"]", "[\"pve3\"]"),
    /* ports */
    BAD("listen_port 0", "fabric.listen_port", "0 is out of range", "51820}", "0}"),
    OK("listen_port 65535", "51820}", "65535}"),
    BAD("listen_port 65536", "fabric.listen_port", "out of range", "51820}", "65536}"),
    BAD("listen_port 4789", "fabric.listen_port", "plain VXLAN port", "51820}", "4789}"),
    BAD("secure_port 4789", "fabric.secure_port", "4789 is the plain VXLAN port", FABRIC_END,
	"\"listen_port\": 51820, \"secure_port\": 4789}"),
    OK("secure_port 8472", FABRIC_END, "\"listen_port\": 51820, \"secure_port\": 8472}"),
    BAD("secure_port 0", "fabric.secure_port", "out of range", FABRIC_END,
	"\"listen_port\": 51820, \"secure_port\": 0}"),
    BAD("secure_port = listen", "fabric.listen_port", "is also the secure VXLAN port", FABRIC_END,
	"\"listen_port\": 51820, \"secure_port\": 51820}"),
    /* the default secure port: the key in the file is listen_port */
    BAD("listen = default secure_port", "fabric.listen_port",
	"4790 is also the secure VXLAN port (fabric.secure_port, default 4790)", "51820}", "4790}"),
    OK("node listen_port ok", NODE1, "{\"listen_port\": 51821, \"name\": \"pve2\","),
    BAD("node listen_port 0", "nodes[1].listen_port", "out of range", NODE1,
	"{\"listen_port\": 0, \"name\": \"pve2\","),
    BAD("node listen_port 70000", "nodes[1].listen_port", "out of range", NODE1,
	"{\"listen_port\": 70000, \"name\": \"pve2\","),
    BAD("node listen_port secure", "nodes[1].listen_port", "is a VXLAN port", NODE1,
	"{\"listen_port\": 4790, \"name\": \"pve2\","),
    OK("keepalive 0", FABRIC_END, "\"listen_port\": 51820, \"keepalive\": 0}"),
    OK("keepalive 65535", FABRIC_END, "\"listen_port\": 51820, \"keepalive\": 65535}"),
    BAD("keepalive 65536", "fabric.keepalive", "give an integer 0..65535", FABRIC_END,
	"\"listen_port\": 51820, \"keepalive\": 65536}"),
    BAD("keepalive -1", "fabric.keepalive", "out of range", FABRIC_END,
	"\"listen_port\": 51820, \"keepalive\": -1}"),
    /* underlay MTU */
    WARN("underlay_mtu 1280", "below 1280", MTU(1280)),
    /* IPv4 underlay: as small as a measured one may be (576); the zones get the warning */
    WARN("underlay_mtu 1279", "below 1280", MTU(1279)),
    WARN("underlay_mtu 576", "below 1280", MTU(576)),
    BAD("underlay_mtu 575", "fabric.underlay_mtu", "575 is out of range", MTU(575)),
    OK("underlay_mtu 9000", MTU(9000)),
    OK("underlay_mtu 65535", MTU(65535)),
    BAD("underlay_mtu 65536", "fabric.underlay_mtu", "out of range", MTU(65536)),
    BAD("underlay_mtu string", "fabric.underlay_mtu", "is a string", MTU("1500")),
    /* public keys */
    BAD("key short", "nodes[0].public_key", "not a WireGuard public key", K1,
	"t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31Q"),
    BAD("key bad char", "nodes[0].public_key", "base64 of 32 bytes", K1,
	"t4trv5Xh2YF5ozt-bXxYVHI2m7/vbmEufLZk1+4J31Q="),
    BAD("key 33 bytes", "nodes[0].public_key", "44 characters", K1,
	"t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31Qa"),
    BAD("key non-canonical", "nodes[0].public_key", "not a WireGuard public key", K1,
	"t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31R="),
    BAD("key zero", "nodes[0].public_key", "all-zero key", K1,
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
    /* endpoints */
    OK("endpoint name", NODE1, "{\"endpoint\": \"pve2.example.net:51820\", \"name\": \"pve2\","),
    OK("endpoint v4", NODE1, "{\"endpoint\": \"203.0.113.5:51820\", \"name\": \"pve2\","),
    OK("endpoint v6", NODE1, "{\"endpoint\": \"[2001:db8::5]:51820\", \"name\": \"pve2\","),
    OK("endpoint fqdn dot", NODE1, "{\"endpoint\": \"pve2.example.net.:1\", \"name\": \"pve2\","),
    BAD("underlay v4 mapped", "nodes[0].underlay",
	"\"::ffff:192.0.2.11\" is an IPv4-mapped IPv6 address; give the IPv4 address "
	"\"192.0.2.11\"",
	"\"192.0.2.11\"", "\"::ffff:192.0.2.11\""),
    /* one NAT for two nodes: a port each */
    BAD("endpoint twice", "nodes[1].endpoint",
	"\"203.0.113.5\", port 51820, is also where nodes[0] is reached (its endpoint)", NODE0,
	"{\"endpoint\": \"203.0.113.5:51820\", \"name\": \"pve1\",", NODE1,
	"{\"endpoint\": \"203.0.113.5:51820\", \"name\": \"pve2\","),
    BAD("endpoint twice spelled apart", "nodes[1].endpoint", "is also where nodes[0] is reached",
	NODE0, "{\"endpoint\": \"[2001:db8::5]:51820\", \"name\": \"pve1\",", NODE1,
	"{\"endpoint\": \"[2001:DB8:0::5]:51820\", \"name\": \"pve2\","),
    /* an endpoint where another node is reached without one: its underlay, its port */
    BAD("endpoint at an earlier node's underlay", "nodes[1].endpoint",
	"\"192.0.2.11\", port 51820, is also where nodes[0] is reached (its underlay address "
	"and listen port); two nodes cannot be reached at one address and port",
	NODE1, "{\"endpoint\": \"192.0.2.11:51820\", \"name\": \"pve2\","),
    BAD("endpoint at a later node's underlay", "nodes[0].endpoint",
	"\"192.0.2.12\", port 51820, is also where nodes[1] is reached (its underlay address",
	NODE0, "{\"endpoint\": \"192.0.2.12:51820\", \"name\": \"pve1\","),
    BAD("endpoint at a node's own listen port", "nodes[1].endpoint", "where nodes[0] is reached",
	NODE0, "{\"listen_port\": 51900, \"name\": \"pve1\",", NODE1,
	"{\"endpoint\": \"192.0.2.11:51900\", \"name\": \"pve2\","),
    OK("endpoint at another node's underlay, another port", NODE1,
       "{\"endpoint\": \"192.0.2.11:51821\", \"name\": \"pve2\","),
    OK("endpoint one NAT two ports", NODE0,
       "{\"endpoint\": \"203.0.113.5:51820\", \"name\": \"pve1\",", NODE1,
       "{\"endpoint\": \"203.0.113.5:51821\", \"name\": \"pve2\","),
    BAD("endpoint bare v6", "nodes[1].endpoint", "\"[IPv6]:port\"", NODE1,
	"{\"endpoint\": \"2001:db8::5:51820\", \"name\": \"pve2\","),
    BAD("endpoint no port", "nodes[1].endpoint", "not \"host:port\"", NODE1,
	"{\"endpoint\": \"pve2.example.net\", \"name\": \"pve2\","),
    BAD("endpoint port 0", "nodes[1].endpoint", "port 1..65535", NODE1,
	"{\"endpoint\": \"pve2:0\", \"name\": \"pve2\","),
    BAD("endpoint port 65536", "nodes[1].endpoint", "port 1..65535", NODE1,
	"{\"endpoint\": \"pve2:65536\", \"name\": \"pve2\","),
    BAD("endpoint underscore", "nodes[1].endpoint", "valid DNS name", NODE1,
	"{\"endpoint\": \"pve_2:51820\", \"name\": \"pve2\","),
    BAD("endpoint label dash", "nodes[1].endpoint", "valid DNS name", NODE1,
	"{\"endpoint\": \"-pve2.example:1\", \"name\": \"pve2\","),
    BAD("endpoint empty label", "nodes[1].endpoint", "valid DNS name", NODE1,
	"{\"endpoint\": \"a..b:1\", \"name\": \"pve2\","),
    BAD("endpoint bad v4", "nodes[1].endpoint", "valid DNS name", NODE1,
	"{\"endpoint\": \"192.0.2.256:1\", \"name\": \"pve2\","),
    BAD("endpoint name in brackets", "nodes[1].endpoint", "only an IPv6 address goes in brackets",
	NODE1, "{\"endpoint\": \"[pve2]:1\", \"name\": \"pve2\","),
    BAD("endpoint scoped", "nodes[1].endpoint", "a scoped IPv6 address (%interface) is link-local",
	NODE1, "{\"endpoint\": \"[fe80::1%eth0]:51820\", \"name\": \"pve2\","),
    BAD("endpoint v4-mapped", "nodes[1].endpoint",
	"\"[::ffff:192.0.2.112]:51820\" is an IPv4-mapped IPv6 address; write the IPv4 address: "
	"\"192.0.2.112:51820\"",
	NODE1, "{\"endpoint\": \"[::ffff:192.0.2.112]:51820\", \"name\": \"pve2\","),
    BAD("endpoint in fabric", "nodes[1].endpoint", "inside fabric.prefix", NODE1,
	"{\"endpoint\": \"10.255.0.9:1\", \"name\": \"pve2\","),
    /* transport and policy */
    BAD("transport bad", "zones[0].transport",
	"\"wireguard\" is not allowed; use \"plain\" or \"secure\"", "\"secure\"", "\"wireguard\""),
    OK("mtu_policy max", ZONE0, ZONE0 " \"mtu_policy\": \"max\","),
    BAD("mtu_policy bad", "zones[0].mtu_policy", "use \"stable\" or \"max\"", ZONE0,
	ZONE0 " \"mtu_policy\": \"min\","),
    OK("bridges existing", ZONE0, ZONE0 " \"bridges\": \"existing\","),
    OK("bridges own", ZONE0, ZONE0 " \"bridges\": \"own\","),
    BAD("bridges bad", "zones[0].bridges", "\"own\" or \"existing\"", ZONE0,
	ZONE0 " \"bridges\": \"proxmox\","),
    OK("replaces", ZONE0, ZONE0 " \"bridges\": \"existing\",", VNET0,
       VNET0 " \"replaces\": \"vxlan_vnet100\","),
    BAD("replaces own bridge", "zones[0].vnets[0]", "add \"bridges\": \"existing\"", VNET0,
	VNET0 " \"replaces\": \"vxlan_vnet100\","),
    BAD("replaces bad name", "zones[0].vnets[0].replaces", "not an interface name", ZONE0,
	ZONE0 " \"bridges\": \"existing\",", VNET0, VNET0 " \"replaces\": \"a/b\","),
    BAD("replaces too long", "zones[0].vnets[0].replaces", "1..15 bytes", ZONE0,
	ZONE0 " \"bridges\": \"existing\",", VNET0, VNET0 " \"replaces\": \"vxlan_0123456789\","),
    /* zone MTU */
    BAD("zone mtu 575", "zones[0].mtu", "576..65535", ZONE0, ZONE0 " \"mtu\": 575,"),
    WARN("zone mtu 576 warns", "zones[0].mtu: the zone MTU 576 is below 1280", ZONE0,
	 ZONE0 " \"mtu\": 576,"),
    BAD("zone mtu 65536", "zones[0].mtu", "out of range", ZONE0, ZONE0 " \"mtu\": 65536,"),
    BAD("zone mtu above computed", "zones[0].mtu", "1400 is above the zone's computed MTU 1390",
	MTU(1500), ZONE0, ZONE0 " \"mtu\": 1400,"),
    OK("zone mtu at computed", MTU(1500), ZONE0, ZONE0 " \"mtu\": 1390,"),
    OK("zone mtu lowers", MTU(1500), ZONE0, ZONE0 " \"mtu\": 1300,"),
    WARN("zone mtu lowers warns", "zones[0].mtu: the zone MTU 1200", MTU(1500), ZONE0,
	 ZONE0 " \"mtu\": 1200,"),
    OK("zone mtu max plain ok", MTU(1500), ZONE1, ZONE1 " \"mtu_policy\": \"max\", \"mtu\": 1450,"),
    BAD("zone mtu max plain above", "zones[1].mtu", "computed MTU 1450", MTU(1500), ZONE1,
	ZONE1 " \"mtu_policy\": \"max\", \"mtu\": 1451,"),
    BAD("zone mtu v6 endpoint", "zones[0].mtu", "computed MTU 1370", MTU(1500), ZONE0,
	ZONE0 " \"mtu\": 1390,", NODE1,
	"{\"endpoint\": \"[2001:db8::5]:51820\", \"name\": \"pve2\","),
    OK("zone mtu jumbo", MTU(9000), ZONE0, ZONE0 " \"mtu\": 8890,"),
    WARN("small underlay warns", "zones[0]: the zone MTU 1190 is below 1280", MTU(1300)),
    /* JSON syntax */
    BAD("trailing comma", "<input>:1:", "invalid JSON", "\"cluster\": \"lab\",",
	"\"cluster\": \"lab\",,"),
    /* a duplicate key names its JSON path and line (until 2026-12-07: line and column only) */
    BAD("duplicate key", "version", "appears twice in one object (<input> line 1); keep one",
	"\"version\": 1,", "\"version\": 1, \"version\": 1,"),
    BAD("duplicate nested key", "zones[1].vnets[0].vni", "appears twice", "\"vni\": 200",
	"\"vni\": 200, \"vni\": 201"),
    BAD("duplicate key after arrays", "zones[1].transport", "appears twice",
	"\"transport\": \"plain\",", "\"transport\": \"plain\", \"transport\": \"x\","),
    BAD("duplicate key in a string's braces", "zones[0].name", "appears twice", ZONE0,
	"{\"name\": \"[{\\\"a,\", \"name\": \"tenant-a\","),
    /* past 32 levels: until 2026-12-07 the path after a deep array was "(top level)" */
    BAD("duplicate key after 40 nested arrays", "version", "appears twice", "\"version\": 1,",
	"\"deep\": " OPEN40 CLOSE40 ", \"version\": 1, \"version\": 1,"),
    BAD("duplicate key after 40 nested arrays, nested", "zones[1].vnets[0].vni", "appears twice",
	"\"vni\": 200", "\"d\": " OPEN40 "1" CLOSE40 ", \"vni\": 200, \"vni\": 201"),
    BAD("duplicate key 40 levels deep", "(path too deep)", "appears twice", "\"version\": 1,",
	"\"deep\": " OPEN40 "{\"a\": 1, \"a\": 2}" CLOSE40 ", \"version\": 1,"),
    BAD("duplicate long key", "(path too long)", "appears twice", "\"version\": 1,",
	"\"" A100 "\": 1, \"" A100 "\": 2, \"version\": 1,"),
    BAD("duplicate key after a long key", "version", "appears twice", "\"version\": 1,",
	"\"" A100 "\": 1, \"version\": 1, \"version\": 1,"),
    TEXT("empty text", "", "<input>", "is empty; a definition is one JSON object"),
    BAD("nul escape", "<input>:1:", "invalid JSON", "\"lab\"", "\"l\\u0000b\""),
};

static char *substitute(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t pre, len;
	char *out;

	if (!at)
		return NULL;
	pre = (size_t)(at - text);
	len = strlen(text) - strlen(from) + strlen(to);
	out = malloc(len + 1);
	if (!out)
		return NULL;
	memcpy(out, text, pre);
	strcpy(out + pre, to);
	strcat(out, at + strlen(from));
	return out;
}

static char *build(const struct tcase *t)
{
	char *text = strdup(t->text ? t->text : base), *next;

	for (size_t i = 0; text && i + 1 < sizeof(t->subs) / sizeof(t->subs[0]) && t->subs[i];
	     i += 2) {
		next = substitute(text, t->subs[i], t->subs[i + 1]);
		CHECK(next, "%s: \"%s\" not found in the text", t->name, t->subs[i]);
		free(text);
		text = next;
	}
	return text;
}

/* Whether one of list starts with "path: " (or "path" for a prefix ending in ':') and has msg. */
static int has_message(char **list, size_t n, const char *path, const char *msg)
{
	size_t plen = path ? strlen(path) : 0;

	for (size_t i = 0; i < n; i++) {
		if (path && strncmp(list[i], path, plen))
			continue;
		if (path && path[plen - 1] != ':' && strncmp(list[i] + plen, ": ", 2))
			continue;
		if (!msg || strstr(list[i], msg))
			return 1;
	}
	return 0;
}

static void dump(const char *name, const struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "  %s: error: %s\n", name, d->msgs[i]);
	for (size_t i = 0; i < d->n_warnings; i++)
		fprintf(stderr, "  %s: warning: %s\n", name, d->warnings[i]);
}

static void run_case(const struct tcase *t)
{
	struct cluster *c = (struct cluster *)1;
	struct diag d;
	char *text = build(t);
	int ret, before = unit_failed;

	if (!text)
		return;
	diag_init(&d);
	ret = config_load_buffer(text, strlen(text), &c, &d);
	if (!t->path) {
		CHECK(ret == 0 && c && d.n == 0, "%s: want ok, got %d", t->name, ret);
	} else {
		CHECK(ret == -EINVAL && !c, "%s: want -EINVAL and no cluster, got %d", t->name,
		      ret);
		CHECK(has_message(d.msgs, d.n, t->path, t->msg), "%s: want \"%s: ...%s...\"",
		      t->name, t->path, t->msg);
	}
	if (t->warn)
		CHECK(has_message(d.warnings, d.n_warnings, NULL, t->warn), "%s: want warning %s",
		      t->name, t->warn);
	else
		CHECK(d.n_warnings == 0, "%s: no warning wanted", t->name);
	if (unit_failed != before)
		dump(t->name, &d);
	cluster_free(ret == 0 ? c : NULL);
	diag_free(&d);
	free(text);
}

static void test_defaults(void)
{
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(base, strlen(base), &c, &d), 0, "base loads");
	if (!c)
		return;
	CHECK_INT(c->version, 1, "version");
	CHECK_STR(c->name, "lab", "cluster name");
	CHECK_INT(c->fabric.prefix.len, 24, "prefix length");
	CHECK_INT(c->fabric.listen_port, 51820, "listen_port");
	CHECK_INT(c->fabric.secure_port, 4790, "secure_port default");
	CHECK_INT(c->fabric.keepalive, 25, "keepalive default");
	CHECK_INT(c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU, 0, "no underlay_mtu");
	CHECK_INT(c->n_nodes, 3, "nodes");
	CHECK_STR(c->nodes[1].name, "pve2", "node name");
	CHECK_INT(c->nodes[1].underlay.family, AF_INET, "underlay family");
	CHECK_INT(c->nodes[1].public_key[0], 0x09, "key decoded (C = 000010, X = 010111)");
	CHECK_INT(node_listen_port(c, &c->nodes[1]), 51820, "listen port inherited");
	CHECK_INT(c->nodes[1].flags, 0, "no endpoint, no listen_port");
	CHECK_INT(c->n_zones, 2, "zones");
	CHECK_INT(c->zones[0].transport, TRANSPORT_SECURE, "transport");
	CHECK_INT(c->zones[0].mtu_policy, MTU_POLICY_STABLE, "mtu_policy default");
	CHECK_INT(c->zones[0].flags, 0, "zone flags");
	CHECK_INT(c->zones[0].n_members, 3, "zone on every node by default");
	CHECK_INT(c->zones[1].flags, ZONE_HAS_NODES, "zone nodes given");
	CHECK_INT(c->zones[1].n_members, 2, "zone members");
	CHECK_INT(c->zones[1].members[1], 1, "member index");
	CHECK_INT(c->zones[1].n_vnets, 1, "vnets");
	CHECK_INT(c->zones[1].vnets[0].vni, 200, "vni");
	CHECK_STR(c->zones[1].vnets[0].name, "vnet200", "vnet name");
	cluster_free(c);
	diag_free(&d);
}

static void test_overrides(void)
{
	static const char text[] =
	    "{\"version\": 1, \"cluster\": \"x\", \"fabric\": {\"prefix\": \"fd00::/64\", "
	    "\"listen_port\": 1000, \"secure_port\": 5000, \"keepalive\": 0, \"underlay_mtu\": "
	    "9000}, \"nodes\": [{\"name\": \"a\", \"underlay\": \"2001:db8::1\", "
	    "\"fabric_address\": \"fd00::1\", \"public_key\": \"" K1 "\", \"listen_port\": 1001, "
	    "\"endpoint\": \"[2001:db8:1::1]:1002\"}], \"zones\": [{\"name\": \"z\", "
	    "\"transport\": \"plain\", \"mtu_policy\": \"max\", \"mtu\": 8000, \"vnets\": []}]}";
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(text, strlen(text), &c, &d), 0, "overrides load");
	if (!c) {
		dump("overrides", &d);
		return;
	}
	CHECK_INT(c->fabric.secure_port, 5000, "secure_port");
	CHECK_INT(c->fabric.keepalive, 0, "keepalive 0 kept");
	CHECK_INT(c->fabric.underlay_mtu, 9000, "underlay_mtu");
	CHECK(c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU, "underlay_mtu flag");
	CHECK_INT(node_listen_port(c, &c->nodes[0]), 1001, "node listen_port");
	CHECK(c->nodes[0].flags & NODE_HAS_ENDPOINT, "endpoint flag");
	CHECK_STR(c->nodes[0].endpoint_host, "2001:db8:1::1", "endpoint host without brackets");
	CHECK_INT(c->nodes[0].endpoint_port, 1002, "endpoint port");
	CHECK_INT(c->zones[0].mtu_policy, MTU_POLICY_MAX, "policy");
	CHECK_INT(c->zones[0].mtu, 8000, "zone mtu");
	CHECK_INT(c->zones[0].flags, ZONE_HAS_MTU, "zone flags");
	CHECK_INT(c->zones[0].n_vnets, 0, "no vnets");
	cluster_free(c);
	diag_free(&d);
}

/* Reals with no fraction read as the integers they are (JSON Schema's integers). */
static void test_integral_reals(void)
{
	static const char text[] =
	    "{\"version\": 1.0, \"cluster\": \"x\", \"fabric\": {\"prefix\": \"10.0.0.0/24\", "
	    "\"listen_port\": 5.182e4, \"underlay_mtu\": 9000.0}, \"nodes\": [{\"name\": "
	    "\"a\", \"underlay\": \"192.0.2.1\", \"fabric_address\": \"10.0.0.1\", "
	    "\"public_key\": \"" K1 "\"}], \"zones\": [{\"name\": \"z\", \"transport\": "
	    "\"plain\", \"vnets\": [{\"name\": \"v\", \"vni\": 100.0}]}]}";
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(text, strlen(text), &c, &d), 0, "integral reals load");
	if (!c) {
		dump("integral reals", &d);
		return;
	}
	CHECK_INT(c->fabric.listen_port, 51820, "listen_port 5.182e4");
	CHECK_INT(c->fabric.underlay_mtu, 9000, "underlay_mtu 9000.0");
	CHECK_INT(c->zones[0].vnets[0].vni, 100, "vni 100.0");
	cluster_free(c);
	diag_free(&d);
}

/* Every problem is reported, not only the first. */
static void test_collects_all(void)
{
	static const char text[] =
	    "{\"version\": 2, \"cluster\": \"Lab\", \"fabric\": {\"prefix\": "
	    "\"10.0.0.1/8\"}, \"nodes\": [{\"name\": \"a\"}], \"x\": 1}";
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(text, strlen(text), &c, &d), -EINVAL, "fails");
	CHECK(!c, "no cluster");
	CHECK_INT(d.n, 8,
		  "version, cluster, prefix, listen_port, underlay, fabric_address, key, x");
	CHECK(has_message(d.msgs, d.n, "x", "unknown key"), "x");
	CHECK(has_message(d.msgs, d.n, "version", NULL), "version");
	CHECK(has_message(d.msgs, d.n, "cluster", NULL), "cluster");
	CHECK(has_message(d.msgs, d.n, "fabric.prefix", "host bits"), "prefix");
	CHECK(has_message(d.msgs, d.n, "fabric.listen_port", "missing"), "listen_port");
	CHECK(has_message(d.msgs, d.n, "nodes[0].underlay", "missing"), "underlay");
	CHECK(has_message(d.msgs, d.n, "nodes[0].fabric_address", "missing"), "fabric_address");
	CHECK(has_message(d.msgs, d.n, "nodes[0].public_key", "missing"), "public_key");
	if (d.n != 8)
		dump("collects all", &d);
	diag_free(&d);
}

static void test_syntax_position(void)
{
	static const char text[] = "{\n  \"version\": 1,\n  \"cluster\" \"lab\"\n}\n";
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(text, strlen(text), &c, &d), -EINVAL, "syntax error");
	CHECK(d.n == 1 && strstr(d.msgs[0], "<input>:3:17: invalid JSON"),
	      "line 3, column 17 (jansson counts to the end of the bad token): %s",
	      d.n ? d.msgs[0] : "");
	diag_free(&d);

	diag_init(&d);
	CHECK(config_load_buffer("{\"a\":1} x", 9, &c, &d) == -EINVAL && d.n == 1,
	      "text after the object");
	diag_free(&d);
}

static void test_files(void)
{
	static const char *const examples[] = {
	    "examples/minimal-2node.json",
	    "examples/vxlan-3node.json",
	    "examples/ipv6-underlay.json",
	    "examples/jumbo-9000.json",
	};
	struct cluster *c;
	struct diag d;
	int ret;

	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		diag_init(&d);
		ret = config_load_file(examples[i], &c, &d);
		CHECK(ret == 0 && c && d.n == 0 && d.n_warnings == 0, "%s loads (%d)", examples[i],
		      ret);
		if (ret)
			dump(examples[i], &d);
		cluster_free(c);
		diag_free(&d);
	}
	diag_init(&d);
	c = (struct cluster *)1;
	CHECK_INT(config_load_file("examples/does-not-exist.json", &c, &d), -ENOENT,
		  "missing file");
	CHECK(!c && d.n == 1 && strstr(d.msgs[0], "examples/does-not-exist.json: cannot open"),
	      "missing file message: %s", d.n ? d.msgs[0] : "");
	diag_free(&d);
	diag_init(&d);
	CHECK_INT(config_load_file("examples", &c, &d), -EIO, "a directory");
	diag_free(&d);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);

	for (size_t i = 0; i < n; i++) {
		int before = unit_failed;

		run_case(&cases[i]);
		if (unit_failed != before)
			fprintf(stderr, "  (case %zu \"%s\")\n", i, cases[i].name);
	}
	printf("test_config: %zu table cases\n", n);
	test_defaults();
	test_overrides();
	test_integral_reals();
	test_collects_all();
	test_syntax_position();
	test_files();
	return unit_summary("test_config");
}
