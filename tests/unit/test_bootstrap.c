// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_bootstrap.c - the edits behind init/join/leave (definition/bootstrap.c),
 * the definition file's lock and atomic replace (engine/deffile.c) and
 * key files (definition/keyfile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definition/bootstrap.h"
#include "definition/config.h"
#include "engine/deffile.h"
#include "definition/keyfile.h"
#include "definition/wgkey.h"
#include "unit.h"

static char keys[8][WGKEY_B64_LEN];

static void make_keys(void)
{
	for (size_t i = 0; i < 8; i++) {
		uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];

		wgkey_generate(priv);
		wgkey_public(pub, priv);
		wgkey_to_base64(keys[i], pub);
	}
}

/* Whether any error in d contains text. */
static int diag_has(const struct diag *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++) {
		if (strstr(d->msgs[i], text))
			return 1;
	}
	return 0;
}

static char *base_definition(void)
{
	static char buf[4096];

	snprintf(
	    buf, sizeof(buf),
	    "{\"version\": 1, \"cluster\": \"lab\",\n"
	    " \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820, "
	    "\"keepalive\": 7},\n"
	    " \"nodes\": [\n"
	    "  {\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": "
	    "\"10.255.0.1\", \"public_key\": \"%s\"},\n"
	    "  {\"name\": \"pve2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": "
	    "\"10.255.0.3\", \"public_key\": \"%s\", \"endpoint\": \"198.51.100.7:51999\"}],\n"
	    " \"zones\": [\n"
	    "  {\"name\": \"red\", \"transport\": \"secure\", \"nodes\": [\"pve1\", \"pve2\"],\n"
	    "   \"vnets\": [{\"name\": \"vnet100\", \"vni\": 100}]},\n"
	    "  {\"name\": \"blue\", \"transport\": \"plain\", \"nodes\": [\"pve2\"],\n"
	    "   \"vnets\": [{\"name\": \"vnet200\", \"vni\": 200}]},\n"
	    "  {\"name\": \"all\", \"transport\": \"plain\",\n"
	    "   \"vnets\": [{\"name\": \"vnet300\", \"vni\": 300}]}]}\n",
	    keys[0], keys[1]);
	return buf;
}

static struct cluster *load(const char *text)
{
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	if (config_load_buffer(text, strlen(text), &c, &d) < 0)
		diag_print(&d, stderr);
	diag_free(&d);
	return c;
}

static void test_free_address(void)
{
	static const struct {
		const char *prefix, *used[3], *want;
	} cases[] = {
	    {"10.255.0.0/24", {NULL}, "10.255.0.1"},
	    {"10.255.0.0/24", {"10.255.0.1", "10.255.0.3"}, "10.255.0.2"},
	    {"10.255.0.0/24", {"10.255.0.2", "10.255.0.1"}, "10.255.0.3"},
	    {"10.255.0.0/30", {"10.255.0.1", "10.255.0.2"}, NULL}, /* .3 is the broadcast */
	    {"10.255.0.0/31", {NULL}, "10.255.0.0"},		   /* RFC 3021: both usable */
	    {"10.255.0.0/31", {"10.255.0.0"}, "10.255.0.1"},
	    {"10.255.0.7/32", {"10.255.0.7"}, NULL},
	    {"10.255.0.248/29", {"10.255.0.249"}, "10.255.0.250"},
	    {"fd00:255::/64", {NULL}, "fd00:255::1"},
	    {"fd00:255::/64", {"fd00:255::1", "fd00:255::2"}, "fd00:255::3"},
	    {"fd00:255::/126", {"fd00:255::1", "fd00:255::2", "fd00:255::3"}, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node nodes[3] = {0};
		struct cluster c = {.nodes = nodes};
		struct ip_addr got;
		char s[IP_ADDR_STRLEN];
		int ret;

		CHECK_INT(ip_prefix_parse(cases[i].prefix, &c.fabric.prefix), 0, "%s",
			  cases[i].prefix);
		for (size_t j = 0; j < 3 && cases[i].used[j]; j++)
			ip_addr_parse(cases[i].used[j], &nodes[c.n_nodes++].fabric_address);
		ret = bootstrap_free_address(&c, &got);
		if (!cases[i].want) {
			CHECK_INT(ret, -ENOSPC, "case %zu: %s full", i, cases[i].prefix);
			continue;
		}
		CHECK_INT(ret, 0, "case %zu", i);
		if (ret == 0)
			CHECK_STR(ip_addr_str(&got, s, sizeof(s)), cases[i].want, "case %zu", i);
	}
}

static void test_create(void)
{
	struct member_request m = {"pve1", "192.0.2.11", keys[0]};
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;

	diag_init(&d);
	CHECK_INT(bootstrap_create("lab", "10.255.0.0/24", 51820, &m, &res, &d), 0, "create");
	CHECK_STR(res.fabric_address, "10.255.0.1", "first address");
	c = res.text ? load(res.text) : NULL;
	CHECK(c && c->n_nodes == 1 && !strcmp(c->nodes[0].name, "pve1") &&
		  c->fabric.listen_port == 51820 && c->n_zones == 0,
	      "the new definition loads with one node");
	cluster_free(c);
	bootstrap_result_free(&res);
	diag_free(&d);

	/* each bad argument: an error that names it and nothing returned */
	static const struct {
		const char *cluster, *prefix;
		unsigned int port;
		const char *underlay, *want;
	} bad[] = {
	    {"lab", "10.255.0.1/24", 51820, "192.0.2.11", "--prefix"},
	    {"lab", "banana", 51820, "192.0.2.11", "--prefix"},
	    {"lab", "10.255.0.0/24", 0, "192.0.2.11", "--listen-port"},
	    {"lab", "10.255.0.0/24", 70000, "192.0.2.11", "--listen-port"},
	    {"Lab!", "10.255.0.0/24", 51820, "192.0.2.11", "cluster"},
	    {"lab", "10.255.0.0/24", 51820, "10.255.0.9", "nodes[0].underlay"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct member_request mb = {"pve1", bad[i].underlay, keys[0]};

		diag_init(&d);
		CHECK(bootstrap_create(bad[i].cluster, bad[i].prefix, bad[i].port, &mb, &res, &d) <
			  0,
		      "bad case %zu", i);
		CHECK(!res.text && diag_has(&d, bad[i].want), "bad case %zu names %s", i,
		      bad[i].want);
		diag_free(&d);
	}
}

static void test_join(void)
{
	const char *text = base_definition();
	struct member_request m = {"pve3", "192.0.2.13", keys[2]};
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;
	char *p;

	diag_init(&d);
	CHECK_INT(bootstrap_join(text, strlen(text), &m, false, &res, &d), 0, "join pve3");
	CHECK_INT(res.outcome, BOOTSTRAP_ADDED, "added");
	CHECK_STR(res.fabric_address, "10.255.0.2", "the free address between .1 and .3");
	c = res.text ? load(res.text) : NULL;
	CHECK(c && c->n_nodes == 3 && !strcmp(c->nodes[2].name, "pve3"), "pve3 is the third");
	/* everything else kept: the values the loader knows and where the keys were */
	CHECK(c && c->fabric.keepalive == 7 && (c->nodes[1].flags & NODE_HAS_ENDPOINT) &&
		  c->n_zones == 3 && c->zones[1].n_members == 1 &&
		  !(c->zones[2].flags & ZONE_HAS_NODES),
	      "other values unchanged");
	p = res.text;
	CHECK(p && strstr(p, "\"version\"") < strstr(p, "\"cluster\"") &&
		  strstr(p, "\"cluster\"") < strstr(p, "\"fabric\"") &&
		  strstr(p, "\"fabric\"") < strstr(p, "\"nodes\"") &&
		  strstr(p, "\"nodes\"") < strstr(p, "\"zones\"") &&
		  strstr(p, "\"public_key\": \"") < strstr(p, "\"endpoint\""),
	      "key order kept");
	cluster_free(c);
	bootstrap_result_free(&res);
	diag_free(&d);

	/* already a member with the same key: nothing to write */
	m = (struct member_request){"pve2", "192.0.2.12", keys[1]};
	diag_init(&d);
	CHECK_INT(bootstrap_join(text, strlen(text), &m, false, &res, &d), 0, "same key");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "unchanged, no text");
	CHECK_STR(res.fabric_address, "10.255.0.3", "its address");
	CHECK(d.n_warnings == 0, "no warning when nothing differs");
	diag_free(&d);

	/* the same key from another underlay address: unchanged, with a warning */
	m.underlay = "192.0.2.99";
	diag_init(&d);
	CHECK_INT(bootstrap_join(text, strlen(text), &m, false, &res, &d), 0, "moved node");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "still unchanged");
	CHECK(d.n_warnings == 1 && strstr(d.warnings[0], "nodes[1].underlay") &&
		  strstr(d.warnings[0], "192.0.2.99"),
	      "a warning names the path and both addresses");
	diag_free(&d);
	m.underlay = "192.0.2.12";

	/* with another key: an error naming its public_key, unless --rotate-key */
	m.public_key = keys[3];
	diag_init(&d);
	CHECK(bootstrap_join(text, strlen(text), &m, false, &res, &d) < 0 && !res.text,
	      "other key refused");
	CHECK(diag_has(&d, "nodes[1].public_key") && diag_has(&d, "--rotate-key"),
	      "the error names the path and the way out");
	diag_free(&d);
	diag_init(&d);
	CHECK_INT(bootstrap_join(text, strlen(text), &m, true, &res, &d), 0, "rotate");
	CHECK(res.outcome == BOOTSTRAP_ROTATED && res.text && strstr(res.text, keys[3]) &&
		  !strstr(res.text, keys[1]),
	      "the new key replaces the old one");
	bootstrap_result_free(&res);
	diag_free(&d);
}

static void test_join_refused(void)
{
	const char *text = base_definition();
	char full[4096];
	static const struct {
		struct member_request m;
		const char *want;
	} bad[] = {
	    {{"pve3", "192.0.2.12", keys[2]}, "nodes[2].underlay"},   /* pve2's underlay */
	    {{"pve3", "2001:db8::13", keys[2]}, "nodes[2].underlay"}, /* another family */
	    {{"pve3", "192.0.2.13", keys[0]}, "nodes[2].public_key"}, /* pve1's key */
	    {{"PVE 3", "192.0.2.13", keys[2]}, "nodes[2].name"},
	    {{"pve3", "192.0.2.13", "not-a-key"}, "nodes[2].public_key"},
	};
	struct bootstrap_result res;
	struct diag d;
	char *p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_init(&d);
		CHECK(bootstrap_join(text, strlen(text), &bad[i].m, false, &res, &d) < 0 &&
			  !res.text,
		      "bad join %zu", i);
		CHECK(diag_has(&d, bad[i].want), "bad join %zu names %s", i, bad[i].want);
		diag_free(&d);
	}
	/* an invalid definition is not edited */
	diag_init(&d);
	CHECK(bootstrap_join("{\"version\": 2}", 14, &bad[0].m, false, &res, &d) < 0,
	      "invalid input refused");
	CHECK(diag_has(&d, "fabricd check"), "says to check it");
	diag_free(&d);
	/* a full prefix: 10.255.0.0/30 has .1 and .2, both taken */
	snprintf(full, sizeof(full), "%s", text);
	p = strstr(full, "10.255.0.0/24");
	memcpy(p, "10.255.0.0/30", 13);
	p = strstr(full, "10.255.0.3");
	memcpy(p, "10.255.0.2", 10);
	diag_init(&d);
	CHECK(bootstrap_join(full, strlen(full),
			     &(struct member_request){"pve3", "192.0.2.13", keys[2]}, false, &res,
			     &d) < 0,
	      "full prefix");
	CHECK(diag_has(&d, "fabric.prefix") && diag_has(&d, "larger prefix"),
	      "says the prefix is full");
	diag_free(&d);
}

static void test_leave(void)
{
	const char *text = base_definition();
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;

	/* pve1: a member of red (listed) and all (implicit) */
	diag_init(&d);
	CHECK_INT(bootstrap_leave(text, strlen(text), "pve1", &res, &d), 0, "leave pve1");
	CHECK(res.outcome == BOOTSTRAP_REMOVED && res.zones_left == 1, "one zone list edited");
	c = res.text ? load(res.text) : NULL;
	CHECK(c && c->n_nodes == 1 && !strcmp(c->nodes[0].name, "pve2"), "pve2 stays");
	CHECK(c && c->n_zones == 3 && c->zones[0].n_members == 1 && c->zones[0].members[0] == 0,
	      "red now has pve2 only");
	CHECK(res.text && !strstr(res.text, "pve1"), "pve1 is nowhere");
	cluster_free(c);
	bootstrap_result_free(&res);
	diag_free(&d);

	/* pve2 is blue's only member: leaving would leave an empty list */
	diag_init(&d);
	CHECK(bootstrap_leave(text, strlen(text), "pve2", &res, &d) < 0 && !res.text,
	      "leave of a zone's last member refused");
	CHECK(diag_has(&d, "zones[1].nodes") && diag_has(&d, "blue"), "names the zone");
	diag_free(&d);

	diag_init(&d);
	CHECK_INT(bootstrap_leave(text, strlen(text), "pve9", &res, &d), 0, "not a member");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "nothing to do");
	diag_free(&d);
}

static void test_leave_last(void)
{
	struct member_request m = {"pve1", "192.0.2.11", keys[0]};
	struct bootstrap_result res, left;
	struct diag d;

	diag_init(&d);
	bootstrap_create("lab", "10.255.0.0/24", 51820, &m, &res, &d);
	CHECK(res.text && bootstrap_leave(res.text, strlen(res.text), "pve1", &left, &d) < 0,
	      "the last node cannot leave");
	CHECK(diag_has(&d, "nodes: node pve1 is the only node"), "says why");
	bootstrap_result_free(&res);
	diag_free(&d);
}

static void test_files(void)
{
	char dir[] = "/tmp/test_bootstrap.XXXXXX", path[256], key[256], err[512];
	uint8_t priv[WGKEY_LEN], back[WGKEY_LEN];
	struct deffile f;
	struct stat st;
	mode_t old = umask(0);
	int fd;

	CHECK(mkdtemp(dir) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/cluster.json", dir);
	CHECK_INT(deffile_open_locked(path, 0, "test", &f, err, sizeof(err)), 0, "%s", err);
	CHECK(!f.exists, "no file yet");
	CHECK_INT(deffile_replace(&f, "{}\n", 3, err, sizeof(err)), 0, "%s", err);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644, "a new definition is 0644");
	deffile_close(&f);

	CHECK_INT(deffile_open_locked(path, 0, "test", &f, err, sizeof(err)), 0, "%s", err);
	CHECK(f.exists && f.len == 3 && !strcmp(f.text, "{}\n"), "read back");
	/* an editor that ignores the lock: replace must not overwrite its change */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "[]\n", 3) == 3, "foreign write");
	close(fd);
	CHECK_INT(deffile_replace(&f, "{\"a\": 1}\n", 9, err, sizeof(err)), -EAGAIN,
		  "changed meanwhile");
	CHECK_INT(deffile_reread(&f, err, sizeof(err)), 0, "%s", err);
	CHECK_INT(deffile_replace(&f, "{\"a\": 1}\n", 9, err, sizeof(err)), 0, "%s", err);
	deffile_close(&f);

	snprintf(path, sizeof(path), "%s/nodir/cluster.json", dir);
	CHECK(deffile_open_locked(path, 0, "test", &f, err, sizeof(err)) < 0 &&
		  strstr(err, "nodir"),
	      "a missing directory is named: %s", err);

	snprintf(key, sizeof(key), "%s/etc/private.key", dir);
	wgkey_generate(priv);
	CHECK_INT(keyfile_write(key, priv, err, sizeof(err)), 0, "%s", err);
	CHECK(stat(key, &st) == 0 && (st.st_mode & 07777) == 0600, "key file is 0600 (umask 0)");
	CHECK_INT(wgkey_load_file(key, back, err, sizeof(err)), 0, "%s", err);
	CHECK(!memcmp(priv, back, WGKEY_LEN), "the key reads back");
	snprintf(key, sizeof(key), "%s/a/b/private.key", dir);
	CHECK(keyfile_write(key, priv, err, sizeof(err)) < 0 && strstr(err, "a/b/private.key"),
	      "a key file two directories deep is refused: %s", err);
	umask(old);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK_INT(system(path), 0, "cleanup");
}

int main(void)
{
	make_keys();
	test_free_address();
	test_create();
	test_join();
	test_join_refused();
	test_leave();
	test_leave_last();
	test_files();
	return unit_summary("test_bootstrap");
}
