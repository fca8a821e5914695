// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pve_parse.c - the Proxmox file readers: both section-config dialects,
 * list values, property strings, booleans, corosync.conf, .running-config
 * and priv/wg-keys.cfg.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "definition/pve_corosync.h"
#include "definition/pve_import.h"
#include "definition/pve_running.h"
#include "definition/pve_sections.h"
#include "definition/wgkey.h"
#include "unit.h"

#define T(s) s, strlen(s) /* text and its length */

static int has(const struct diag *d, bool warning, const char *piece)
{
	size_t n = warning ? d->n_warnings : d->n;
	char **v = warning ? d->warnings : d->msgs;

	for (size_t i = 0; i < n; i++)
		if (strstr(v[i], piece))
			return 1;
	return 0;
}

static int parse(struct pve_file *f, enum pve_dialect dialect, const char *text, struct diag *d)
{
	memset(f, 0, sizeof(*f));
	f->name = "t.cfg";
	f->dialect = dialect;
	diag_init(d);
	return pve_file_parse(f, text, strlen(text), d);
}

static void test_perl(void)
{
	struct pve_file f;
	struct diag d;
	size_t count;
	const struct pve_kv *kv;

	/* comments inside a section do not end it; a blank line does; bare key */
	CHECK_INT(parse(&f, PVE_DIALECT_PERL,
			"# head\nvxlan: lab\n\tpeers 10.0.0.1, 10.0.0.2\n# inside\n  mtu   1400  \n"
			"\tvlanaware\n\talias Blue  tenant \n\nvnet: b\n\tzone lab\n\tzone x\n",
			&d),
		  0, "perl ok");
	CHECK_INT(f.n, 2, "two sections");
	CHECK_STR(f.sections[0].type, "vxlan", "type");
	CHECK_STR(f.sections[0].id, "lab", "id");
	CHECK_INT(f.sections[0].line, 2, "header line");
	CHECK_STR(pve_section_get(&f.sections[0], "mtu", NULL)->value, "1400", "trimmed");
	CHECK_STR(pve_section_get(&f.sections[0], "alias", NULL)->value, "Blue  tenant",
		  "inner spaces kept");
	kv = pve_section_get(&f.sections[0], "vlanaware", NULL);
	CHECK(kv && !kv->value, "bare key has no value");
	CHECK_INT(pve_section_get(&f.sections[0], "mtu", NULL)->line, 5, "key line");
	kv = pve_section_get(&f.sections[1], "zone", &count);
	CHECK_INT(count, 2, "repeated keys kept");
	CHECK_STR(kv->value, "lab", "first first");
	CHECK_INT(d.n + d.n_warnings, 0, "no problems");
	pve_file_free(&f);
	diag_free(&d);

	/* bad lines are dropped with a warning, the rest stays */
	CHECK_INT(parse(&f, PVE_DIALECT_PERL,
			"vxlan lab\n\tpeers x\nvxlan: a b\nvnet: ok\n\tzone z\n\n\ttag 5\n", &d),
		  0, "perl lenient");
	CHECK_INT(f.n, 1, "one good section");
	CHECK_INT(f.sections[0].n_kv, 1, "tag after the blank line is not in it");
	CHECK(has(&d, true, "t.cfg:1: \"vxlan lab\" is not a section header"), "header warning");
	CHECK(has(&d, true, "t.cfg:7: indented line outside a section; line ignored"),
	      "outside warning");
	CHECK_INT(d.n, 0, "no errors");
	pve_file_free(&f);
	diag_free(&d);

	/*
	 * As Perl's SectionConfig: only an empty line ends a section. Whitespace
	 * (or a lone CR) inside is ignored, and so is a header before any empty
	 * line, with its keys going to the section still open (a repeated key:
	 * the first value counts).
	 */
	CHECK_INT(parse(&f, PVE_DIALECT_PERL,
			"vnet: a\n\tzone lab\n  \n\ttag 100\nvnet: b\n\ttag 101\r\n\r\n"
			"vnet: c\n\ttag 102\n\n",
			&d),
		  0, "perl sections");
	CHECK_INT(f.n, 1, "vnet b is no section, and c comes after a CR that ends nothing");
	CHECK_STR(f.sections[0].id, "a", "a");
	kv = pve_section_get(&f.sections[0], "tag", &count);
	CHECK(kv && count == 3 && !strcmp(kv->value, "100"), "a's tag after the whitespace line");
	CHECK(has(&d, true, "t.cfg:3: a line of only whitespace does not end a section"),
	      "whitespace warning");
	CHECK(has(&d, true, "t.cfg:5: \"vnet: b\" follows a section without an empty line"),
	      "header warning");
	CHECK(has(&d, true, "t.cfg:7: a line of only whitespace (a CR: Windows line ends)"),
	      "CR warning");
	pve_file_free(&f);
	diag_free(&d);

	/* a section id defined twice: the last counts, as in Proxmox */
	CHECK_INT(parse(&f, PVE_DIALECT_PERL,
			"vnet: a\n\tzone lab\n\ttag 100\n\nvnet: b\n\ttag 7\n\nvnet: a\n\tzone "
			"lab\n\ttag 101\n",
			&d),
		  0, "perl redefined");
	CHECK_INT(f.n, 2, "a once, and b");
	CHECK_STR(f.sections[1].id, "a", "the last a");
	CHECK_STR(pve_section_get(&f.sections[1], "tag", NULL)->value, "101", "its tag");
	CHECK(has(&d, true, "t.cfg:1 [vnet: a]: section id defined again at line 8"),
	      "redefined warning");
	pve_file_free(&f);
	diag_free(&d);
}

static void test_rust(void)
{
	struct pve_file f;
	struct diag d;

	CHECK_INT(
	    parse(&f, PVE_DIALECT_RUST,
		  "wireguard_fabric:  wgf \n\tip_prefix 10.0.0.0/24\n\nwireguard_node: wgf_a\n"
		  "\tpeers type=internal,node=b\n\tpeers type=internal,node=c\n",
		  &d),
	    0, "rust ok");
	CHECK_INT(f.n, 2, "two sections");
	CHECK_STR(f.sections[0].id, "wgf", "id trimmed");
	pve_file_free(&f);
	diag_free(&d);

	CHECK_INT(parse(&f, PVE_DIALECT_RUST, "wireguard_fabric: wgf\n# no\n\tip_prefix x\n", &d),
		  -EINVAL, "comment rejects the file");
	CHECK_INT(f.n, 0, "file emptied");
	CHECK(has(&d, false, "t.cfg:2: a comment line"), "comment error");
	CHECK(has(&d, false, "rejects the whole file"), "says so");
	pve_file_free(&f);
	diag_free(&d);

	CHECK_INT(parse(&f, PVE_DIALECT_RUST, "wireguard_fabric: wgf\n\tip_prefix\n", &d), -EINVAL,
		  "key without value");
	CHECK(has(&d, false, "key \"ip_prefix\" has no value"), "no value error");
	pve_file_free(&f);
	diag_free(&d);

	CHECK_INT(parse(&f, PVE_DIALECT_RUST, "1node: x\n", &d), -EINVAL, "header not alpha");
	CHECK(!has(&d, false, "1node"), "rust lines are never quoted (wg-keys.cfg)");
	pve_file_free(&f);
	diag_free(&d);
}

static void test_values(void)
{
	char **v;
	bool b;
	struct pve_props p;
	char err[128];

	CHECK_INT(pve_split_list("a,b c;d\t,,e ", &v), 5, "mixed separators");
	CHECK_STR(v[0], "a", "first");
	CHECK_STR(v[4], "e", "last");
	CHECK(v[5] == NULL, "terminated");
	pve_strv_free(v);
	CHECK_INT(pve_split_list(" ,; ", &v), 0, "only separators");
	pve_strv_free(v);

	CHECK_INT(pve_parse_bool(PVE_DIALECT_PERL, "1", &b), 0, "perl 1");
	CHECK(b, "true");
	CHECK_INT(pve_parse_bool(PVE_DIALECT_PERL, NULL, &b), 0, "perl bare");
	CHECK_INT(pve_parse_bool(PVE_DIALECT_PERL, "yes", &b), -EINVAL, "perl yes");
	CHECK_INT(pve_parse_bool(PVE_DIALECT_RUST, "TRUE", &b), 0, "rust TRUE");
	CHECK(b, "true");
	CHECK_INT(pve_parse_bool(PVE_DIALECT_RUST, "Off", &b), 0, "rust Off");
	CHECK(!b, "false");
	CHECK_INT(pve_parse_bool(PVE_DIALECT_RUST, NULL, &b), -EINVAL, "rust bare");
	CHECK_INT(pve_parse_bool(PVE_DIALECT_RUST, "2", &b), -EINVAL, "rust 2");

	CHECK_INT(pve_props_parse("type=external,node=b,allowed_ips=\"10.1.0.0/24,10.2.0.0/24\"",
				  &p, err, sizeof(err)),
		  0, "quoted list");
	CHECK_STR(pve_props_get(&p, "allowed_ips"), "10.1.0.0/24,10.2.0.0/24", "unquoted");
	CHECK_STR(pve_props_get(&p, "node"), "b", "plain");
	pve_props_free(&p);
	CHECK_INT(pve_props_parse("a=\"x\\\"y\\\\z\\n\",b=", &p, err, sizeof(err)), 0, "escapes");
	CHECK_STR(pve_props_get(&p, "a"), "x\"y\\z\n", "escapes decoded");
	CHECK_STR(pve_props_get(&p, "b"), "", "empty value");
	pve_props_free(&p);
	CHECK_INT(pve_props_parse("a=1,a=2", &p, err, sizeof(err)), -EINVAL, "dup");
	CHECK(strstr(err, "twice") != NULL, "%s", err);
	CHECK_INT(pve_props_parse("a=\"open", &p, err, sizeof(err)), -EINVAL, "unterminated");
	CHECK_INT(pve_props_parse("a=\"x\"y", &p, err, sizeof(err)), -EINVAL, "after quote");
	CHECK_INT(pve_props_parse("a=\"\\t\"", &p, err, sizeof(err)), -EINVAL, "bad escape");
	CHECK_INT(pve_props_parse("novalue,b=1", &p, err, sizeof(err)), -EINVAL, "no =");
	CHECK(strstr(err, "novalue") != NULL, "%s", err);
}

static void test_corosync(void)
{
	static const char text[] =
	    "totem {\n  cluster_name: Lab # the name\n  interface {\n"
	    "    linknumber: 0\n  }\n}\nnodelist {\n  node {\n    name: hv1\n"
	    "    nodeid: 1\n    ring0_addr: 203.0.113.11\n"
	    "    link1_addr: fd00::1\n  }\n  node {\n    name: hv2\n"
	    "    ring0_addr: hv2.lan\n  }\n}\n";
	struct corosync_conf c;
	struct diag d;

	diag_init(&d);
	CHECK_INT(corosync_parse(text, strlen(text), "cs", &c, &d), 0, "corosync ok");
	CHECK_STR(c.cluster_name, "Lab", "cluster name, comment stripped");
	CHECK_INT(c.n_nodes, 2, "two nodes");
	CHECK_STR(c.nodes[0].name, "hv1", "name");
	CHECK_INT(c.nodes[0].nodeid, 1, "nodeid");
	CHECK_STR(c.nodes[0].addr[0], "203.0.113.11", "ring0");
	CHECK_STR(c.nodes[0].addr[1], "fd00::1", "link1");
	CHECK_STR(c.nodes[1].addr[0], "hv2.lan", "host names kept");
	corosync_free(&c);

	CHECK_INT(corosync_parse(T("nodelist {\n node {\n nodeid: 1\n }\n}\n"), "cs", &c, &d),
		  -EINVAL, "node without name");
	CHECK(has(&d, false, "cs:4: node block without \"name:\""), "name error");
	CHECK_INT(corosync_parse(T("totem {\n"), "cs", &c, &d), -EINVAL, "unclosed");
	CHECK(has(&d, false, "not closed"), "unclosed error");
	CHECK_INT(corosync_parse(T("}\n"), "cs", &c, &d), -EINVAL, "unbalanced");
	CHECK_INT(corosync_parse(T("nodelist {\nnode {\nname: a\n}\nnode {\nname: a\n}\n}\n"), "cs",
				 &c, &d),
		  -EINVAL, "duplicate name");
	CHECK(has(&d, false, "listed twice"), "duplicate error");
	diag_free(&d);
}

static void test_running(void)
{
	static const char text[] =
	    "{\"version\":3,\"zones\":{\"ids\":{\"b\":{\"type\":\"vxlan\",\"nodes\":{\"hv1\":1},"
	    "\"mtu\":1400,\"x\":true},\"a\":{\"type\":\"simple\"}}},\"fabrics\":{\"ids\":{\"f_n\":"
	    "{\"type\":\"wireguard_node\",\"id\":\"f_n\",\"peers\":[\"p=1\",\"p=2\"]}}},"
	    "\"other\":{}}";
	struct pve_running r;
	struct diag d;
	size_t count;

	diag_init(&d);
	CHECK_INT(pve_running_parse(text, strlen(text), &r, &d), 0, "running ok");
	CHECK_INT(r.version, 3, "version");
	CHECK_INT(r.zones.n, 2, "zones");
	CHECK_STR(r.zones.sections[0].id, "a", "sorted by id");
	CHECK_STR(pve_section_get(&r.zones.sections[1], "nodes", NULL)->value, "hv1", "node set");
	CHECK_STR(pve_section_get(&r.zones.sections[1], "mtu", NULL)->value, "1400", "number");
	CHECK_STR(pve_section_get(&r.zones.sections[1], "x", NULL)->value, "1", "boolean");
	CHECK(!pve_section_get(&r.zones.sections[1], "type", NULL), "type is the header");
	pve_section_get(&r.fabrics.sections[0], "peers", &count);
	CHECK_INT(count, 2, "array -> repeated key");
	CHECK(!pve_section_get(&r.fabrics.sections[0], "id", NULL), "id dropped");
	CHECK_INT(r.fabrics.dialect, PVE_DIALECT_RUST, "fabrics are Rust's");
	pve_running_free(&r);

	CHECK_INT(pve_running_parse(T("{\"zones\":"), &r, &d), -EINVAL, "bad JSON");
	CHECK(has(&d, false, ".running-config:1:"), "position");
	CHECK_INT(pve_running_parse(T("{\"zones\":{\"ids\":{\"b\":{\"type\":\"vxlan\",\n"
				      "\"type\":\"simple\"}}}}"),
				    &r, &d),
		  -EINVAL, "duplicate key");
	CHECK(has(&d, false,
		  "zones.ids.b.type: appears twice in one object (.running-config line 2); run SDN "
		  "\"Apply\" in Proxmox again"),
	      "duplicate key named by its path");
	CHECK_INT(pve_running_parse(T("{\"zones\":{\"ids\":[]}}"), &r, &d), -EINVAL, "ids array");
	CHECK(has(&d, false, "\"zones.ids\" is not an object"), "ids error");
	diag_free(&d);
}

#define PRIV "EF4ev8WylwgqZwYpJgmi+7UAjbyzS3kmPjgvGGkGHHY="

static void test_wgkeys(void)
{
	struct pve_file f;
	struct diag d;
	uint8_t key[32], want[32];
	char err[256];

	CHECK_INT(parse(&f, PVE_DIALECT_RUST,
			"node: hv1\n\tprivate_keys name=wg1,key=" PRIV "\n\tprivate_keys name=wg0,"
			"key=" PRIV
			"\n\nnode: hv2\n\tprivate_keys name=wg0,key=bad\n\tprivate_keys x\n",
			&d),
		  0, "wg-keys parse");
	wgkey_from_base64(PRIV, want);
	CHECK_INT(pve_wgkeys_find(&f, "HV1", "wg0", key, err, sizeof(err)), 0, "found");
	CHECK(!memcmp(key, want, 32), "the key");
	CHECK_INT(pve_wgkeys_find(&f, "hv1", "wg9", key, err, sizeof(err)), -ENOENT, "no iface");
	CHECK(strstr(err, "name=wg9") != NULL, "%s", err);
	CHECK_INT(pve_wgkeys_find(&f, "hv3", "wg0", key, err, sizeof(err)), -ENOENT, "no node");
	CHECK_INT(pve_wgkeys_find(&f, "hv2", "wg0", key, err, sizeof(err)), -EINVAL, "bad key");
	CHECK(strstr(err, "bad") == NULL, "never quotes key text: %s", err);
	pve_file_wipe(&f);
	CHECK_STR(pve_section_get(&f.sections[0], "private_keys", NULL)->value, "", "wiped");
	pve_file_free(&f);
	diag_free(&d);
}

int main(void)
{
	test_perl();
	test_rust();
	test_values();
	test_corosync();
	test_running();
	test_wgkeys();
	return unit_summary("test_pve_parse");
}
