// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ifupdown.c - zones whose bridges are another manager's ("bridges":
 * "existing"): the desired state marks their vnets, and the ifupdown2 file
 * that keeps fabricd's ports in them is rendered, written, kept and removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definition/config.h"
#include "definition/desired.h"
#include "engine/ifupdown.h"
#include "unit.h"

static const char def[] =
    "{\"version\": 1, \"cluster\": \"lab\",\n"
    " \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820},\n"
    " \"nodes\": [\n"
    "  {\"name\": \"hv1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": \"10.255.0.1\","
    " \"public_key\": \"t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31Q=\"},\n"
    "  {\"name\": \"hv2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": \"10.255.0.2\","
    " \"public_key\": \"CXmRQWxEZ/Ip0OBIkUEY9l845AwSoxglz2nf2WfBQgs=\"}],\n"
    " \"zones\": [\n"
    "  {\"name\": \"front\", \"transport\": \"secure\", \"bridges\": \"existing\","
    " \"vnets\": [{\"name\": \"vnet1\", \"vni\": 100}, {\"name\": \"vnet2\", \"vni\": 101}]},\n"
    "  {\"name\": \"own\", \"transport\": \"plain\", \"nodes\": [\"hv1\"],"
    " \"vnets\": [{\"name\": \"vnet9\", \"vni\": 900}]},\n"
    "  {\"name\": \"front2\", \"transport\": \"plain\", \"bridges\": \"existing\", "
    "\"nodes\": [\"hv2\"], \"vnets\": [{\"name\": \"vnet3\", \"vni\": 102}]}]}\n";

static int state(size_t self, struct cluster **c, struct node_state *s)
{
	struct diag d;
	int ret;

	diag_init(&d);
	ret = config_load_buffer(def, strlen(def), c, &d);
	if (ret == 0)
		ret = desired_build(*c, self, 1500, s, &d);
	diag_print(&d, stderr);
	diag_free(&d);
	return ret;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_render(void)
{
	struct cluster *c = NULL;
	struct node_state s = {0};
	char *text;

	CHECK_INT(state(0, &c, &s), 0, "hv1 state");
	CHECK(desired_find_vnet(&s, "vnet1")->existing_bridge, "vnet1 existing");
	CHECK(!desired_find_vnet(&s, "vnet9")->existing_bridge, "vnet9 own");
	CHECK(desired_find_vnet(&s, "vnet3") == NULL, "vnet3 not on hv1");
	text = ifupdown_render(&s);
	CHECK(strstr(text, "\niface vnet1\n\tbridge-ports-condone-regex " IFUPDOWN_CONDONE "\n") !=
		  NULL,
	      "%s", text);
	CHECK(strstr(text, "iface vnet2\n") != NULL, "%s", text);
	CHECK(strstr(text, "vnet9") == NULL, "own bridges are ifupdown2's business: %s", text);
	CHECK(strstr(text, "auto") == NULL, "never brings a bridge up itself: %s", text);
	free(text);
	desired_free(&s);
	cluster_free(c);
}

static void test_sync(void)
{
	char dir[] = "/tmp/test_ifupdown.XXXXXX", path[64], *text;
	struct cluster *c = NULL;
	struct node_state s = {0}, none = {0};
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/fabricd", dir);
	CHECK_INT(state(1, &c, &s), 0, "hv2 state");
	CHECK_INT(ifupdown_sync(&s, path), 0, "written");
	text = slurp(path);
	CHECK(text && strstr(text, "iface vnet3\n"), "vnet3 kept");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "mode 0644");
	CHECK_INT(ifupdown_sync(&s, path), 0, "unchanged");
	CHECK_INT(ifupdown_sync(&none, path), 0, "nothing to keep");
	CHECK(access(path, F_OK) < 0, "removed");
	CHECK_INT(ifupdown_sync(&none, path), 0, "still nothing");
	/* a file fabricd did not write is never replaced or removed */
	f = fopen(path, "w");
	fputs("iface vnet3\n\tmtu 1400\n", f);
	fclose(f);
	CHECK_INT(ifupdown_sync(&s, path), -EEXIST, "foreign file refused");
	CHECK_INT(ifupdown_sync(&none, path), 0, "foreign file kept");
	CHECK(access(path, F_OK) == 0, "still there");
	unlink(path);
	rmdir(dir);
	desired_free(&s);
	cluster_free(c);
}

int main(void)
{
	test_render();
	test_sync();
	return unit_summary("test_ifupdown");
}
