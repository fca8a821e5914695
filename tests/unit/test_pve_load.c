// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pve_load.c - Proxmox's files from disk (definition/pve_load.h), as
 * `fabricd run --sdn-dir` reads them: the default corosync.conf beside the
 * SDN directory, a clean deployed configuration loading into a cluster,
 * and every failure (unreadable, unmappable, not JSON) in diag with the file,
 * section and key, and no cluster. Run from the repository root.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definition/config.h"
#include "definition/pve_load.h"
#include "unit.h"

#define SET "tests/fixtures/pve/pve92"

static void test_paths(void)
{
	static const struct {
		const char *dir, *corosync;
	} cases[] = {
	    {"/etc/pve/sdn", "/etc/pve/corosync.conf"},
	    {"/etc/pve/sdn/", "/etc/pve/corosync.conf"},
	    {"/etc//pve//sdn//", "/etc//pve/corosync.conf"},
	    {"/sdn", "/corosync.conf"},
	    {"sdn", "corosync.conf"},
	    {"pve/sdn", "pve/corosync.conf"},
	};
	struct pve_paths p;
	char buf[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pve_paths_init(&p, cases[i].dir, NULL, buf, sizeof(buf));
		CHECK_STR(p.corosync, cases[i].corosync, "beside %s", cases[i].dir);
		CHECK(p.corosync_given && !p.pending, "%s", cases[i].dir);
	}
	pve_paths_init(&p, "/x/sdn", "/y/c.conf", buf, sizeof(buf));
	CHECK_STR(p.corosync, "/y/c.conf", "--corosync wins");
}

static char *read_all(const char *path)
{
	char *text = NULL;
	size_t len;

	CHECK_INT(pve_read_file(path, &text, &len), 0, "%s", path);
	return text;
}

/* Replaces the first `from` in text by `to` (text is malloc'd; returned, maybe moved). */
static char *replace(char *text, const char *from, const char *to)
{
	char *at = strstr(text, from), *out;
	size_t n;

	CHECK(at != NULL, "fixture holds %s", from);
	if (!at)
		return text;
	n = strlen(text) - strlen(from) + strlen(to) + 1;
	out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	free(text);
	return out;
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

/* Set B without its external node, in dir/sdn and dir/corosync.conf. */
static void clean_set(const char *dir)
{
	char path[PATH_MAX + 32], *running = read_all(SET "/sdn/.running-config"),
				  *corosync = read_all(SET "/corosync.conf");

	running = replace(running,
			  ",\"type=external,node=backup,iface=wg0,allowed_ips=\\\"10.251.0.0/"
			  "24,10.252.0.0/24\\\"\"",
			  "");
	running = replace(running,
			  "\"wgf_backup\":{\"type\":\"wireguard_node\",\"id\":\"wgf_backup\","
			  "\"role\":\"external\",\"public_key\":\"fxFK1rIp2EBgRfi5TDAZ3XlkNq/"
			  "Ntn2R30kW6rFUYj8=\",\"endpoint\":\"backup.example.net:51900\",\"ip\":"
			  "\"10.250.0.9\",\"allowed_ips\":[\"10.251.0.0/24\"]},",
			  "");
	snprintf(path, sizeof(path), "%s/sdn", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/sdn/.running-config", dir);
	write_text(path, running);
	snprintf(path, sizeof(path), "%s/corosync.conf", dir);
	write_text(path, corosync);
	free(running);
	free(corosync);
}

static bool has_error(const struct diag *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msgs[i], text))
			return true;
	return false;
}

static int load(const char *sdn, const char *corosync, struct cluster **c, struct diag *d)
{
	static const struct pve_import_opts opts = {0};
	struct pve_paths p;
	char buf[PATH_MAX];

	diag_init(d);
	pve_paths_init(&p, sdn, corosync, buf, sizeof(buf));
	return pve_load_cluster(&p, &opts, c, d);
}

static void test_load(void)
{
	char dir[] = "/tmp/test_pve_load.XXXXXX", sdn[PATH_MAX], path[PATH_MAX + 32];
	struct cluster *c = (struct cluster *)1;
	struct diag d;

	/* set B as it is: its external node does not map, so nothing is used */
	CHECK_INT(load(SET "/sdn", NULL, &c, &d), -EINVAL, "external node");
	CHECK(c == NULL, "no cluster from a configuration that does not map");
	CHECK(has_error(&d, ".running-config (fabrics) [wireguard_node: wgf_backup] role"),
	      "names file, section and key");
	diag_free(&d);

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	clean_set(dir);
	snprintf(sdn, sizeof(sdn), "%s/sdn", dir);
	CHECK_INT(load(sdn, NULL, &c, &d), 0, "the clean set loads");
	CHECK_INT(d.n, 0, "no errors");
	CHECK(c && c->n_nodes == 3 && c->n_zones == 2, "3 nodes, zones sec and pub");
	CHECK(c && !strcmp(c->name, "lab"), "cluster name from corosync.conf");
	cluster_free(c);
	diag_free(&d);

	CHECK_INT(load(sdn, "/nonexistent/corosync.conf", &c, &d), -ENOENT, "no corosync");
	CHECK(c == NULL && has_error(&d, "/nonexistent/corosync.conf: cannot read"), "named");
	diag_free(&d);

	snprintf(path, sizeof(path), "%s/.running-config", sdn);
	write_text(path, "{\"version\": 8, \"zones\": ");
	CHECK_INT(load(sdn, NULL, &c, &d), -EINVAL, "truncated JSON");
	CHECK(c == NULL && d.n > 0, "reported");
	diag_free(&d);

	unlink(path);
	CHECK_INT(load(sdn, NULL, &c, &d), -ENOENT, "never applied");
	CHECK(c == NULL && has_error(&d, ".running-config: cannot read"), "named");
	diag_free(&d);

	snprintf(path, sizeof(path), "%s/corosync.conf", dir);
	unlink(path);
	rmdir(sdn);
	rmdir(dir);
}

int main(void)
{
	test_paths();
	test_load();
	return unit_summary("test_pve_load");
}
