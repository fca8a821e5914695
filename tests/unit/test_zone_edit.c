// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_zone_edit.c - the edits behind `fabricd zone|vnet add|remove`
 * (definition/zone_edit.c): each outcome, and each refusal with the JSON
 * path it names and no text produced.
 */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "definition/config.h"
#include "definition/wgkey.h"
#include "definition/zone_edit.h"
#include "unit.h"

static char keys[2][WGKEY_B64_LEN];

static int diag_has(const struct diag *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++) {
		if (strstr(d->msgs[i], text))
			return 1;
	}
	return 0;
}

static const char *base(void)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"cluster\": \"lab\",\n"
		 " \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820},\n"
		 " \"nodes\": [\n"
		 "  {\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": "
		 "\"10.255.0.1\", \"public_key\": \"%s\"},\n"
		 "  {\"name\": \"pve2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": "
		 "\"10.255.0.2\", \"public_key\": \"%s\"}],\n"
		 " \"zones\": [\n"
		 "  {\"name\": \"red\", \"transport\": \"secure\", \"mtu\": 1400,\n"
		 "   \"vnets\": [{\"name\": \"vnet100\", \"vni\": 100}]}]}\n",
		 keys[0], keys[1]);
	return buf;
}

static struct cluster *load(const char *text)
{
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	if (!text || config_load_buffer(text, strlen(text), &c, &d) < 0)
		diag_print(&d, stderr);
	diag_free(&d);
	return c;
}

static void test_parse(void)
{
	struct vnet_request v;
	struct diag d;

	diag_init(&d);
	CHECK_INT(vnet_request_parse("vnet7:7", "--vnet", &v, &d), 0, "NAME:VNI");
	CHECK(!strcmp(v.name, "vnet7") && v.vni == 7, "%s %lld", v.name, v.vni);
	CHECK(vnet_request_parse("vnet7", "--vnet", &v, &d) < 0, "no colon");
	CHECK(vnet_request_parse(":7", "--vnet", &v, &d) < 0, "no name");
	CHECK(vnet_request_parse("a:", "--vnet", &v, &d) < 0, "no VNI");
	CHECK(vnet_request_parse("a:7x", "vnet add", &v, &d) < 0, "not a number");
	CHECK(vnet_request_parse("a:-7", "vnet add", &v, &d) < 0, "negative");
	CHECK(diag_has(&d, "--vnet: \"vnet7\" is not NAME:VNI"), "names the option");
	CHECK(diag_has(&d, "vnet add: \"a:7x\": the VNI \"7x\" is not a number"), "says why");
	diag_free(&d);
}

static void test_zone_add(void)
{
	const char *text = base(), *nodes[] = {"pve2"};
	struct vnet_request v[2] = {{"vnet200", 200}, {"vnet201", 201}};
	struct zone_request z = {"blue", "plain", v, 2, NULL, 0, NULL};
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;

	diag_init(&d);
	CHECK_INT(zone_edit_add(text, strlen(text), &z, &res, &d), 0, "zone add");
	c = load(res.text);
	CHECK(c && c->n_zones == 2 && c->zones[1].n_vnets == 2 && c->zones[1].n_members == 2 &&
		  c->zones[1].transport == TRANSPORT_PLAIN,
	      "blue is on every node with 2 vnets");
	CHECK(res.outcome == BOOTSTRAP_ADDED && res.changed == 2, "outcome");
	CHECK(res.text && strstr(res.text, "\"mtu\": 1400"), "the rest stays");
	CHECK(c && !(c->zones[1].flags & ZONE_HAS_NODES), "no node list: joining nodes carry it");
	cluster_free(c);
	bootstrap_result_free(&res);

	/* the same zone again: unchanged; a subset of its vnets too */
	z.name = "red", z.transport = "secure", z.vnets = (struct vnet_request[]){{"vnet100", 100}};
	z.n_vnets = 1;
	CHECK_INT(zone_edit_add(text, strlen(text), &z, &res, &d), 0, "red again");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "unchanged");
	/* red with another transport, another vnet, or a node list: refused */
	z.transport = "plain";
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0 && !res.text, "transport");
	CHECK(diag_has(&d, "zones[0]: zone red already exists (transport secure"), "names it");
	z.transport = "secure", z.nodes = nodes, z.n_nodes = 1;
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0, "node list differs");

	/* a node list of its own */
	z.name = "green";
	CHECK_INT(zone_edit_add(text, strlen(text), &z, &res, &d) < 0, 1, "vnet100 twice");
	CHECK(diag_has(&d, "zones[1].vnets[0]"), "the loader names the duplicate");
	z.vnets = v, z.n_vnets = 1;
	CHECK_INT(zone_edit_add(text, strlen(text), &z, &res, &d), 0, "green on pve2");
	c = load(res.text);
	CHECK(c && c->zones[1].n_members == 1 && c->zones[1].members[0] == 1, "pve2 only");
	cluster_free(c);
	bootstrap_result_free(&res);

	diag_free(&d);
}

/* The definition of base() with pve_sdn_dir dir, whose .running-config has front and back. */
static const char *with_sdn_dir(char *dir)
{
	static char buf[2560];
	char running[PATH_MAX];
	const char *b = base(), *cut = strstr(b, "\"fabric\"");
	FILE *f;

	if (!mkdtemp(dir))
		return NULL;
	snprintf(running, sizeof(running), "%s/.running-config", dir);
	f = fopen(running, "w");
	if (!f)
		return NULL;
	fputs("{\"version\": 4, \"zones\": {\"ids\": {\"front\": {\"type\": \"simple\"}, "
	      "\"back\": {\"type\": \"simple\"}}}, \"vnets\": {\"ids\": {\"web\": {\"type\": "
	      "\"vnet\", \"zone\": \"front\"}}}}",
	      f);
	fclose(f);
	snprintf(buf, sizeof(buf), "%.*s\"pve_sdn_dir\": \"%s\",\n %s", (int)(cut - b), b, dir,
		 cut);
	return buf;
}

/*
 * --pve-zone: follows a Proxmox Simple zone, no "vnets" key; again:
 * unchanged. Checked as `fabricd check` does, against Proxmox's
 * .running-config: a zone Proxmox does not have, or one followed already,
 * is refused before anything is written.
 */
static void test_zone_add_pve(void)
{
	char dir[] = "/tmp/test_zone_edit.XXXXXX", running[PATH_MAX];
	const char *text = with_sdn_dir(dir);
	struct zone_request z;
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;

	CHECK(text != NULL, "a Proxmox SDN directory");
	if (!text)
		return;
	diag_init(&d);
	z = (struct zone_request){"front", "secure", NULL, 0, NULL, 0, "front"};
	CHECK_INT(zone_edit_add(text, strlen(text), &z, &res, &d), 0, "pve zone");
	c = load(res.text);
	CHECK(c && c->n_zones == 2 && (c->zones[1].flags & ZONE_PVE_FOLLOW) &&
		  !strcmp(c->zones[1].pve_zone, "front"),
	      "follows front");
	CHECK(res.text && !strstr(res.text, "\"vnets\": []"), "no vnets key: Proxmox's");
	if (res.text) {
		char *again = strdup(res.text);
		struct bootstrap_result res2;

		CHECK_INT(zone_edit_add(again, strlen(again), &z, &res2, &d), 0, "again");
		CHECK(res2.outcome == BOOTSTRAP_UNCHANGED, "unchanged");
		z.pve_zone = "back";
		CHECK(zone_edit_add(again, strlen(again), &z, &res2, &d) < 0, "another pve zone");
		/* a pinned VNI (README: two derived VNIs collide): its first one makes "vnets" */
		struct vnet_request pin = {"web2", 1896};
		struct cluster *pinned;

		CHECK_INT(vnet_edit_add(again, strlen(again), "front", &pin, 1, &res2, &d), 0,
			  "vnet add on a followed zone");
		pinned = res2.text ? load(res2.text) : NULL;
		CHECK(pinned && pinned->zones[1].n_vnets == 1 &&
			  pinned->zones[1].vnets[0].vni == 1896 &&
			  (pinned->zones[1].flags & ZONE_PVE_FOLLOW),
		      "pinned, still following front");
		cluster_free(pinned);
		bootstrap_result_free(&res2);
		free(again);
	}
	cluster_free(c);
	bootstrap_result_free(&res);
	z = (struct zone_request){"ghost", "plain", NULL, 0, NULL, 0, "nosuch"};
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0 && !res.text, "no such zone");
	CHECK(diag_has(&d, "Proxmox has no zone nosuch"), "named");
	if (zone_edit_add(text, strlen(text),
			  &(struct zone_request){"front", "secure", NULL, 0, NULL, 0, "front"},
			  &res, &d) == 0 &&
	    res.text) {
		char *once = strdup(res.text);

		bootstrap_result_free(&res);
		z = (struct zone_request){"front2", "plain", NULL, 0, NULL, 0, "front"};
		CHECK(zone_edit_add(once, strlen(once), &z, &res, &d) < 0 && !res.text,
		      "followed twice");
		CHECK(diag_has(&d, "is followed by zones[1] already"), "named");
		free(once);
	}
	diag_free(&d);
	snprintf(running, sizeof(running), "%s/.running-config", dir);
	unlink(running);
	rmdir(dir);
}

static void test_zone_add_refused(void)
{
	const char *text = base(), *nodes[] = {"pve9"};
	struct vnet_request v[] = {{"Bad", 5}, {"ok", 0}};
	struct zone_request z = {"blue", "plain", v, 1, NULL, 0, NULL};
	struct bootstrap_result res;
	struct diag d;

	diag_init(&d);
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0 && !res.text, "bad vnet name");
	CHECK(diag_has(&d, "zones[1].vnets[0].name"), "path");
	z.vnets = v + 1;
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0, "VNI 0");
	CHECK(diag_has(&d, "zones[1].vnets[0].vni"), "path");
	z.n_vnets = 0, z.nodes = nodes, z.n_nodes = 1;
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0, "unknown node");
	CHECK(diag_has(&d, "zones[1].nodes[0]: \"pve9\" is not a node"), "path");
	z.nodes = NULL, z.name = "Blue!";
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0, "bad zone name");
	CHECK(diag_has(&d, "zones[1].name"), "path");
	z.name = "blue", z.transport = "fast";
	CHECK(zone_edit_add(text, strlen(text), &z, &res, &d) < 0, "bad transport");
	CHECK(diag_has(&d, "zones[1].transport"), "path");
	CHECK(zone_edit_add("{}", 2, &z, &res, &d) < 0, "invalid input");
	CHECK(diag_has(&d, "fabricd check"), "says to check it first");
	diag_free(&d);
}

static void test_zone_remove(void)
{
	const char *text = base();
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;

	diag_init(&d);
	CHECK_INT(zone_edit_remove(text, strlen(text), "red", &res, &d), 0, "remove red");
	c = load(res.text);
	CHECK(c && c->n_zones == 0 && res.changed == 1 && res.outcome == BOOTSTRAP_REMOVED,
	      "gone with its vnet");
	cluster_free(c);
	bootstrap_result_free(&res);
	CHECK_INT(zone_edit_remove(text, strlen(text), "blue", &res, &d), 0, "not there");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "unchanged");
	CHECK(zone_edit_remove("[]", 2, "red", &res, &d) < 0, "invalid input");
	diag_free(&d);
}

static void test_vnets(void)
{
	const char *text = base(), *names[] = {"vnet100", "nope"};
	struct vnet_request v[] = {{"vnet100", 100}, {"vnet101", 101}};
	struct bootstrap_result res;
	struct cluster *c;
	struct diag d;

	diag_init(&d);
	CHECK_INT(vnet_edit_add(text, strlen(text), "red", v, 2, &res, &d), 0, "vnet add");
	c = load(res.text);
	CHECK(c && c->zones[0].n_vnets == 2 && c->zones[0].vnets[1].vni == 101, "one added");
	CHECK(res.changed == 1 && res.outcome == BOOTSTRAP_ADDED, "vnet100 was there");
	cluster_free(c);
	bootstrap_result_free(&res);
	CHECK_INT(vnet_edit_add(text, strlen(text), "red", v, 1, &res, &d), 0, "already there");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "unchanged");
	CHECK(vnet_edit_add(text, strlen(text), "blue", v, 1, &res, &d) < 0, "no such zone");
	CHECK(diag_has(&d, "zones: there is no zone \"blue\" (zones: red)"), "names the zones");
	v[1].vni = 100;
	CHECK(vnet_edit_add(text, strlen(text), "red", v + 1, 1, &res, &d) < 0, "VNI taken");
	CHECK(diag_has(&d, "zones[0].vnets[1].vni"), "path");
	v[0].vni = 7;
	CHECK(vnet_edit_add(text, strlen(text), "red", v, 1, &res, &d) < 0, "name taken");
	CHECK(diag_has(&d, "zones[0].vnets[1].name"), "path");

	CHECK_INT(vnet_edit_remove(text, strlen(text), names, 2, &res, &d), 0, "vnet remove");
	c = load(res.text);
	CHECK(c && c->zones[0].n_vnets == 0 && res.changed == 1, "vnet100 gone, nope skipped");
	cluster_free(c);
	bootstrap_result_free(&res);
	CHECK_INT(vnet_edit_remove(text, strlen(text), names + 1, 1, &res, &d), 0, "not there");
	CHECK(res.outcome == BOOTSTRAP_UNCHANGED && !res.text, "unchanged");
	diag_free(&d);
}

int main(void)
{
	for (size_t i = 0; i < 2; i++) {
		uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];

		wgkey_generate(priv);
		wgkey_public(pub, priv);
		wgkey_to_base64(keys[i], pub);
	}
	test_parse();
	test_zone_add();
	test_zone_add_pve();
	test_zone_add_refused();
	test_zone_remove();
	test_vnets();
	return unit_summary("test_zone_edit");
}
