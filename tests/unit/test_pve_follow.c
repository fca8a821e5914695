// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pve_follow.c - zones that follow a Proxmox Simple zone
 * (definition/pve_follow.h): the new keys ("pve_zone", "vni_range",
 * "pve_sdn_dir") and their errors, the VNI each node derives from a vnet
 * name, pins, and every problem of the deployed configuration (a name
 * fabricd cannot carry, a zone Proxmox lacks or builds itself, two vnets
 * with one VNI), each naming the Proxmox vnet or zone and leaving the
 * cluster as it was. Also the files: definition_load_file() reads
 * pve_sdn_dir/.running-config only where a zone follows.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "definition/config.h"
#include "definition/desired.h"
#include "definition/pve_follow.h"
#include "unit.h"

#define NODES                                                                                      \
	"\"nodes\": [{\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": "      \
	"\"10.255.0.1\", \"public_key\": \"t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31Q=\"},"       \
	"{\"name\": \"pve2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": \"10.255.0.2\", "  \
	"\"public_key\": \"CXmRQWxEZ/Ip0OBIkUEY9l845AwSoxglz2nf2WfBQgs=\"}]"

#define DEF_HEAD                                                                                   \
	"{\"version\": 1, \"cluster\": \"lab\", \"fabric\": {\"prefix\": \"10.255.0.0/24\", "      \
	"\"listen_port\": 51820}, " NODES ", "

/* front follows Proxmox's Simple zone front in [1000, 1999], db pinned; lan is fabricd's own */
#define ZONES                                                                                      \
	"\"zones\": [{\"name\": \"front\", \"transport\": \"secure\", \"pve_zone\": \"front\", "   \
	"\"vni_range\": [1000, 1999], \"vnets\": [{\"name\": \"db\", \"vni\": 1500, "              \
	"\"replaces\": \"vxlan_db\"}, {\"name\": \"gone\", \"vni\": 1501}]}, "                     \
	"{\"name\": \"lan\", \"transport\": \"plain\", \"vnets\": [{\"name\": \"vnet100\", "       \
	"\"vni\": 100}]}]"

#define RUNNING_HEAD                                                                               \
	"{\"version\": 4, \"zones\": {\"ids\": {\"front\": {\"type\": \"simple\", \"mtu\": "       \
	"1390}, "                                                                                  \
	"\"lab\": {\"type\": \"vxlan\", \"peers\": \"192.0.2.11,192.0.2.12\"}}}, "

static bool has(char **msgs, size_t n, const char *text)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(msgs[i], text))
			return true;
	return false;
}

static struct cluster *load_def(const char *text, struct diag *d)
{
	struct cluster *c = NULL;

	diag_init(d);
	CHECK_INT(config_load_buffer(text, strlen(text), &c, d), 0, "%s", text);
	return c;
}

/* Applies the vnets part of a .running-config to a fresh copy of the definition. */
static int follow(const char *def, const char *vnets, struct cluster **out, struct diag *d)
{
	char running[2048];
	struct pve_running r;
	int ret;

	snprintf(running, sizeof(running), RUNNING_HEAD "\"vnets\": {\"ids\": {%s}}}", vnets);
	*out = load_def(def, d);
	if (!*out)
		return -EINVAL;
	CHECK_INT(pve_running_parse(running, strlen(running), &r, d), 0, "%s", running);
	ret = pve_follow_apply(*out, &r, d);
	pve_running_free(&r);
	return ret;
}

static const struct vnet *vnet_of(const struct zone *z, const char *name)
{
	for (size_t i = 0; i < z->n_vnets; i++)
		if (!strcmp(z->vnets[i].name, name))
			return &z->vnets[i];
	return NULL;
}

static void test_vni(void)
{
	/* fixed values: every node, every architecture derives these (FNV-1a 32) */
	CHECK_INT(pve_follow_vni("vnet1", 1000, 1999), 1895, "vnet1");
	CHECK_INT(pve_follow_vni("vnet2", 1000, 1999), 1514, "vnet2");
	CHECK_INT(pve_follow_vni("vnet1", 7, 7), 7, "a range of one");
	CHECK_INT(pve_follow_vni("", 1, 16777215), 1 + 2166136261U % 16777215U, "empty");
	for (char id[3] = "aa"; id[0] <= 'z'; id[0]++) {
		uint32_t v = pve_follow_vni(id, PVE_VNI_FIRST, PVE_VNI_LAST);

		CHECK(v >= PVE_VNI_FIRST && v <= PVE_VNI_LAST, "%s in the default range", id);
	}
}

static void test_keys(void)
{
	static const struct {
		const char *zone, *error;
	} bad[] = {
	    {"\"vni_range\": [1, 2], \"vnets\": []",
	     "zones[0].vni_range: is for a zone that follows"},
	    {"\"pve_zone\": \"front\", \"vni_range\": [5, 2]",
	     "zones[0].vni_range: [5,2] is not a"},
	    {"\"pve_zone\": \"front\", \"vni_range\": [0, 2]", "zones[0].vni_range: [0,2] is not"},
	    {"\"pve_zone\": \"front\", \"vni_range\": [1]", "zones[0].vni_range: [1] is not"},
	    {"\"pve_zone\": \"front\", \"vni_range\": [1000.5, 1999]",
	     "zones[0].vni_range: [1000.5,1999] is not"},
	    {"\"pve_zone\": \"front\", \"vni_range\": 5", "zones[0].vni_range: 5 is an integer"},
	    {"\"pve_zone\": \"front-1\"",
	     "zones[0].pve_zone: \"front-1\" is not a Proxmox zone id"},
	    {"\"pve_zone\": \"toolongid\"", "is not a Proxmox zone id"},
	    {"\"pve_zone\": 3", "zones[0].pve_zone: 3 is an integer"},
	    {"\"pve_zone\": \"front\", \"bridges\": \"own\"",
	     "zones[0].bridges: \"own\" cannot be"},
	    {"\"vnets\": [], \"pve_zon\": \"front\"", "pve_zone"},
	};
	char text[1024];
	struct cluster *c = NULL;
	struct diag d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 DEF_HEAD "\"zones\": [{\"name\": \"z\", \"transport\": \"plain\", %s}]}",
			 bad[i].zone);
		diag_init(&d);
		CHECK_INT(config_load_buffer(text, strlen(text), &c, &d), -EINVAL, "%s", text);
		CHECK(has(d.msgs, d.n, bad[i].error), "%s: %s", bad[i].zone,
		      d.n ? d.msgs[0] : "no error");
		diag_free(&d);
	}
	snprintf(text, sizeof(text), DEF_HEAD "\"pve_sdn_dir\": \"pve/sdn\", " ZONES "}");
	diag_init(&d);
	CHECK_INT(config_load_buffer(text, strlen(text), &c, &d), -EINVAL, "relative dir");
	CHECK(has(d.msgs, d.n, "pve_sdn_dir: \"pve/sdn\" is not an absolute path"), "named");
	diag_free(&d);

	/* "vnets" optional, "bridges": "existing" implied, the default range and directory */
	c = load_def(DEF_HEAD "\"zones\": [{\"name\": \"z\", \"transport\": \"plain\", "
			      "\"pve_zone\": \"Front1\"}]}",
		     &d);
	CHECK(c && (c->zones[0].flags & ZONE_PVE_FOLLOW) &&
		  (c->zones[0].flags & ZONE_EXISTING_BRIDGES),
	      "follows, bridges existing");
	CHECK(c && c->zones[0].n_vnets == 0 && !strcmp(c->zones[0].pve_zone, "Front1"), "id");
	CHECK(c && c->zones[0].vni_first == PVE_VNI_FIRST && c->zones[0].vni_last == PVE_VNI_LAST,
	      "default range");
	CHECK(c && !strcmp(c->pve_sdn_dir, "/etc/pve/sdn") && pve_follows(c), "default dir");
	if (c) {
		pve_follow_path(c, text, sizeof(text));
		CHECK_STR(text, "/etc/pve/sdn/.running-config", "path");
	}
	cluster_free(c);
	diag_free(&d);

	/* a range of reals with no fraction (JSON Schema's integers) */
	c = load_def(DEF_HEAD "\"zones\": [{\"name\": \"z\", \"transport\": \"plain\", "
			      "\"pve_zone\": \"front\", \"vni_range\": [1000.0, 1999.0]}]}",
		     &d);
	CHECK(c && c->zones[0].vni_first == 1000 && c->zones[0].vni_last == 1999, "range 1000.0");
	cluster_free(c);
	diag_free(&d);
}

static void test_apply(void)
{
	struct cluster *c;
	struct diag d;
	const struct vnet *v;

	CHECK_INT(follow(DEF_HEAD ZONES "}",
			 "\"vnet2\": {\"type\": \"vnet\", \"zone\": \"front\"}, "
			 "\"vnet1\": {\"type\": \"vnet\", \"zone\": \"front\", \"vlanaware\": 1}, "
			 "\"db\": {\"type\": \"vnet\", \"zone\": \"front\"}, "
			 "\"x\": {\"type\": \"vnet\", \"zone\": \"lab\", \"tag\": 5}",
			 &c, &d),
		  0, "follows");
	CHECK_INT(d.n, 0, "no errors: %s", d.n ? d.msgs[0] : "");
	CHECK(c && c->zones[0].n_vnets == 3, "db, vnet1, vnet2; not x (a VXLAN zone's)");
	if (c && c->zones[0].n_vnets == 3) {
		CHECK_STR(c->zones[0].vnets[0].name, "db", "sorted by id");
		v = vnet_of(&c->zones[0], "db");
		CHECK(v && v->vni == 1500 && !strcmp(v->replaces, "vxlan_db"),
		      "the pin wins whole");
		v = vnet_of(&c->zones[0], "vnet1");
		CHECK(v && v->vni == 1895, "derived");
		v = vnet_of(&c->zones[0], "vnet2");
		CHECK(v && v->vni == 1514, "derived");
		CHECK(c->zones[1].n_vnets == 1 && c->zones[1].vnets[0].vni == 100, "lan untouched");
	}
	CHECK(has(d.warnings, d.n_warnings, "zones[0].vnets[1]: vnet gone is pinned but"),
	      "a stale pin is said");
	CHECK(has(d.warnings, d.n_warnings, "[vnet: vnet1]: vlanaware"), "vlanaware said");
	CHECK(c && c->zones[0].pve_mtu == 1390 && c->zones[1].pve_mtu == 0,
	      "Proxmox's zone MTU kept (its guests'), for the following zone only");
	cluster_free(c);
	diag_free(&d);

	/* set to 0 they are as good as absent: nothing said */
	CHECK_INT(follow(DEF_HEAD ZONES "}",
			 "\"vnet1\": {\"type\": \"vnet\", \"zone\": \"front\", \"vlanaware\": 0, "
			 "\"isolate-ports\": 0}",
			 &c, &d),
		  0, "vlanaware 0, isolate-ports 0");
	CHECK(!has(d.warnings, d.n_warnings, "vlanaware"), "vlanaware 0 is not vlan-aware");
	cluster_free(c);
	diag_free(&d);

	/* no vnets in Proxmox's zone: nothing carried (a zone just created) */
	CHECK_INT(follow(DEF_HEAD ZONES "}", "", &c, &d), 0, "empty zone");
	CHECK(c && c->zones[0].n_vnets == 0, "no vnets");
	cluster_free(c);
	diag_free(&d);
}

/* The guests' MTU Proxmox gives against what the zone carries: said when above. */
static void test_guest_mtu(void)
{
	static const struct {
		unsigned int pve_mtu, underlay;
		const char *warning; /* NULL: none */
	} cases[] = {
	    {1390, 1500, NULL},
	    {0, 1500,
	     "zones[0].pve_zone: Proxmox zone front gives its guests MTU 1500 (no MTU set), above "
	     "the 1390 zone \"front\" carries between nodes here: their larger frames are "
	     "dropped on the way, silently; set the zone's MTU to 1390 in Proxmox"},
	    {1450, 1500, "gives its guests MTU 1450, above the 1390"},
	    {0, 9000, NULL}, /* a jumbo underlay carries 1500 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node_state st;
		struct cluster *c;
		struct diag d, built;

		CHECK_INT(follow(DEF_HEAD ZONES "}", "", &c, &d), 0, "follows");
		diag_free(&d);
		if (!c)
			continue;
		c->zones[0].pve_mtu = cases[i].pve_mtu;
		diag_init(&built);
		CHECK_INT(desired_build(c, 0, cases[i].underlay, &st, &built), 0, "built");
		if (cases[i].warning)
			CHECK(has(built.warnings, built.n_warnings, cases[i].warning),
			      "%u on %u: %s", cases[i].pve_mtu, cases[i].underlay,
			      built.n_warnings ? built.warnings[0] : "no warning");
		else
			CHECK(!has(built.warnings, built.n_warnings, "gives its guests"),
			      "%u on %u: nothing to say: %s", cases[i].pve_mtu, cases[i].underlay,
			      built.n_warnings ? built.warnings[0] : "");
		desired_free(&st);
		diag_free(&built);
		cluster_free(c);
	}
}

static void test_errors(void)
{
	static const struct {
		const char *vnets, *error;
	} bad[] = {
	    {"\"Blue\": {\"type\": \"vnet\", \"zone\": \"front\"}",
	     ".running-config (vnets) [vnet: Blue]: the vnet id has characters other than a-z"},
	    {"\"vx12\": {\"type\": \"vnet\", \"zone\": \"front\"}",
	     "[vnet: vx12]: the vnet id is the name of a device fabricd creates itself"},
	    {"\"wgfab0\": {\"type\": \"vnet\", \"zone\": \"front\"}",
	     "[vnet: wgfab0]: the vnet id"},
	    {"\"default\": {\"type\": \"vnet\", \"zone\": \"front\"}",
	     "[vnet: default]: the vnet id cannot be an interface name (the kernel refuses"},
	    /* FNV-1a: v33 and vnet1 both hash to 1895 in [1000, 1999] */
	    {"\"v33\": {\"type\": \"vnet\", \"zone\": \"front\"}, \"vnet1\": {\"type\": \"vnet\", "
	     "\"zone\": \"front\"}",
	     "[vnet: vnet1] (zone front, VNI from its name): VNI 1895 is also the VNI of "
	     ".running-config (vnets) [vnet: v33] (zone front, VNI from its name); pin the vnet "
	     "added last to a free VNI (the other keeps its VNI) in its zone's \"vnets\": "
	     "{\"name\": \"vnet1\", \"vni\": 1896} (zone front) or {\"name\": \"v33\", \"vni\": "
	     "1896}"},
	    {"\"vnet100\": {\"type\": \"vnet\", \"zone\": \"front\"}",
	     "zones[1].vnets[0] (vnet100): bridge vnet100 is also .running-config (vnets) "
	     "[vnet: vnet100] (zone front, VNI from its name); vnet names must be unique"},
	    /* isolated guests and fabricd's isolated VXLAN port exchange nothing */
	    {"\"web\": {\"type\": \"vnet\", \"zone\": \"front\", \"isolate-ports\": 1}",
	     ".running-config (vnets) [vnet: web] isolate-ports: fabricd cannot carry vnet web: "
	     "Proxmox isolates its guests' ports, and fabricd's VXLAN ports are isolated too"},
	};
	struct cluster *c;
	struct diag d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(follow(DEF_HEAD ZONES "}", bad[i].vnets, &c, &d), -EINVAL, "%s",
			  bad[i].vnets);
		CHECK(has(d.msgs, d.n, bad[i].error), "%s: %s", bad[i].vnets,
		      d.n ? d.msgs[0] : "no error");
		CHECK(c && c->zones[0].n_vnets == 2 && !strcmp(c->zones[0].vnets[1].name, "gone"),
		      "the cluster is left as it was");
		cluster_free(c);
		diag_free(&d);
	}
	/* a derived VNI that another zone's vnet has: the derived one is to pin */
	CHECK_INT(follow(DEF_HEAD "\"zones\": [{\"name\": \"front\", \"transport\": \"secure\", "
				  "\"pve_zone\": \"front\", \"vni_range\": [1000, 1999]}, "
				  "{\"name\": \"lan\", \"transport\": \"plain\", \"vnets\": "
				  "[{\"name\": \"v100\", \"vni\": 1895}]}]}",
			 "\"vnet1\": {\"type\": \"vnet\", \"zone\": \"front\"}", &c, &d),
		  -EINVAL, "derived vs fixed");
	CHECK(
	    has(d.msgs, d.n,
		"[vnet: vnet1] (zone front, VNI from its name): VNI 1895 is also the VNI of "
		"zones[1].vnets[0] (v100); pin this vnet to a free VNI in zone front's \"vnets\": "
		"{\"name\": \"vnet1\", \"vni\": 1896}"),
	    "%s", d.n ? d.msgs[0] : "no error");
	cluster_free(c);
	diag_free(&d);
}

static void test_zones(void)
{
	static const struct {
		const char *zones, *error;
	} bad[] = {
	    {"{\"name\": \"a\", \"transport\": \"plain\", \"pve_zone\": \"nope\"}",
	     "zones[0].pve_zone: Proxmox has no zone nope in .running-config (zones); create it"},
	    {"{\"name\": \"a\", \"transport\": \"plain\", \"pve_zone\": \"lab\"}",
	     ".running-config (zones) [vxlan: lab]: is a vxlan zone, which Proxmox builds itself"},
	    {"{\"name\": \"a\", \"transport\": \"plain\", \"pve_zone\": \"front\"}, {\"name\": "
	     "\"b\", \"transport\": \"plain\", \"pve_zone\": \"front\"}",
	     "zones[1].pve_zone: Proxmox zone front is followed by zones[0] already"},
	};
	char text[1024];
	struct cluster *c;
	struct diag d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), DEF_HEAD "\"zones\": [%s]}", bad[i].zones);
		CHECK_INT(follow(text, "\"v1\": {\"type\": \"vnet\", \"zone\": \"front\"}", &c, &d),
			  -EINVAL, "%s", bad[i].zones);
		CHECK(has(d.msgs, d.n, bad[i].error), "%s: %s", bad[i].zones,
		      d.n ? d.msgs[0] : "no error");
		cluster_free(c);
		diag_free(&d);
	}
}

static void test_members(void)
{
	static const char running[] =
	    "{\"zones\": {\"ids\": {\"front\": {\"type\": \"simple\", \"nodes\": {\"PVE2\": 1, "
	    "\"hv9\": 1}}}}, \"vnets\": {\"ids\": {\"v1\": {\"type\": \"vnet\", \"zone\": "
	    "\"front\"}}}}";
	static const char empty[] = "{\"zones\": {\"ids\": {\"front\": {\"type\": \"simple\", "
				    "\"nodes\": {}}}}}";
	struct pve_running r;
	struct cluster *c;
	struct diag d;

	/* Proxmox's zone is on pve2 (and an unknown hv9): so is fabricd's */
	c = load_def(DEF_HEAD "\"zones\": [{\"name\": \"front\", \"transport\": \"plain\", "
			      "\"pve_zone\": \"front\"}]}",
		     &d);
	CHECK_INT(pve_running_parse(running, strlen(running), &r, &d), 0, "parse");
	CHECK(c && c->zones[0].n_members == 2, "every node before");
	CHECK_INT(c ? pve_follow_apply(c, &r, &d) : -1, 0, "apply");
	CHECK(c && c->zones[0].n_members == 1 && c->zones[0].members[0] == 1, "pve2 only");
	CHECK(has(d.warnings, d.n_warnings,
		  ".running-config (zones) [simple: front] nodes: hv9 is not a node of the "
		  "definition"),
	      "hv9 said");
	cluster_free(c);
	diag_free(&d);

	/* the definition's own node list wins */
	c = load_def(DEF_HEAD "\"zones\": [{\"name\": \"front\", \"transport\": \"plain\", "
			      "\"nodes\": [\"pve1\"], \"pve_zone\": \"front\"}]}",
		     &d);
	CHECK_INT(c ? pve_follow_apply(c, &r, &d) : -1, 0, "apply");
	CHECK(c && c->zones[0].n_members == 1 && c->zones[0].members[0] == 0, "pve1 kept");
	cluster_free(c);
	diag_free(&d);
	pve_running_free(&r);

	/* an empty node set is no restriction, as in Proxmox */
	c = load_def(DEF_HEAD "\"zones\": [{\"name\": \"front\", \"transport\": \"plain\", "
			      "\"pve_zone\": \"front\"}]}",
		     &d);
	CHECK_INT(pve_running_parse(empty, strlen(empty), &r, &d), 0, "parse");
	CHECK_INT(c ? pve_follow_apply(c, &r, &d) : -1, 0, "apply");
	CHECK(c && c->zones[0].n_members == 2, "every node");
	cluster_free(c);
	diag_free(&d);
	pve_running_free(&r);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL, "%s", path);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void test_files(void)
{
	char dir[] = "/tmp/test_pve_follow.XXXXXX", def[PATH_MAX], running[PATH_MAX], text[2048];
	struct cluster *c;
	struct diag d;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(def, sizeof(def), "%s/def.json", dir);
	snprintf(running, sizeof(running), "%s/.running-config", dir);
	snprintf(text, sizeof(text), DEF_HEAD "\"pve_sdn_dir\": \"%s\", " ZONES "}", dir);
	write_text(def, text);

	diag_init(&d);
	CHECK_INT(definition_load_file(def, &c, &d), -ENOENT, "never applied");
	CHECK(c == NULL && has(d.msgs, d.n, "/.running-config: cannot read"), "named");
	CHECK(has(d.msgs, d.n, "run SDN \"Apply\" in Proxmox"), "what to do");
	diag_free(&d);

	write_text(running, RUNNING_HEAD "\"vnets\": {\"ids\": {\"vnet1\": {\"type\": \"vnet\", "
					 "\"zone\": \"front\"}}}}");
	diag_init(&d);
	CHECK_INT(definition_load_file(def, &c, &d), 0, "loads");
	CHECK(c && c->zones[0].n_vnets == 1 && c->zones[0].vnets[0].vni == 1895, "vnet1");
	cluster_free(c);
	diag_free(&d);

	write_text(running, RUNNING_HEAD "\"vnets\": ");
	diag_init(&d);
	CHECK_INT(definition_load_file(def, &c, &d), -EINVAL, "truncated");
	CHECK(c == NULL && d.n > 0, "reported");
	CHECK(has(d.msgs, d.n, "/.running-config: not Proxmox's deployed SDN configuration") &&
		  has(d.msgs, d.n, "run SDN \"Apply\" in Proxmox"),
	      "the file named, and what to do");
	diag_free(&d);

	/* a definition without followed zones never reads it */
	snprintf(text, sizeof(text),
		 DEF_HEAD "\"pve_sdn_dir\": \"%s\", \"zones\": [{\"name\": \"lan\", \"transport\": "
			  "\"plain\", \"vnets\": []}]}",
		 dir);
	write_text(def, text);
	diag_init(&d);
	CHECK_INT(definition_load_file(def, &c, &d), 0, "not read");
	cluster_free(c);
	diag_free(&d);
	unlink(running);
	unlink(def);
	rmdir(dir);
}

int main(void)
{
	test_vni();
	test_keys();
	test_apply();
	test_guest_mtu();
	test_errors();
	test_zones();
	test_members();
	test_files();
	return unit_summary("test_pve_follow");
}
