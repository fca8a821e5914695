// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/cp_def.c - the control-plane bench's cluster: N nodes with real
 * WireGuard keys and made-up addresses (underlay 172.16.0.0/12, fabric
 * 10.255.0.0/16), the first half of the vnets in plain zones and the rest
 * in secure ones, 16 vnets a zone; and the iproute2 batch files that build
 * node n1's share of it exactly as fabricd does (bridge, VXLAN device as an
 * isolated port without learning, owner alias, no IPv6 link-local address,
 * one all-zeros flood entry per remote) and delete it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/control_plane.h"
#include "base/log.h"
#include "definition/desired.h"
#include "definition/wgkey.h"

#define CP_CLUSTER "cpbench"

/* Node i (0-based): its addresses as text. */
static void underlay_of(unsigned int i, char *out, size_t len)
{
	snprintf(out, len, "172.16.%u.%u", (i + 1) >> 8, (i + 1) & 0xff);
}

static void fabric_of(unsigned int i, char *out, size_t len)
{
	snprintf(out, len, "10.255.%u.%u", (i + 1) >> 8, (i + 1) & 0xff);
}

/* Vnet k of a transport: its VNI. */
static unsigned int vni_of(bool secure, unsigned int k)
{
	return (secure ? CP_SECURE_VNI0 : CP_PLAIN_VNI0) + k;
}

static int write_key(const char *path, const uint8_t priv[WGKEY_LEN])
{
	char b64[WGKEY_B64_LEN];
	ssize_t w;
	int fd;

	wgkey_to_base64(b64, priv);
	b64[WGKEY_B64_LEN - 1] = '\n'; /* replaces the NUL: 44 characters and a newline */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	w = fd >= 0 ? write(fd, b64, sizeof(b64)) : -1;
	explicit_bzero(b64, sizeof(b64));
	if (fd < 0 || w != (ssize_t)sizeof(b64) || close(fd) < 0) {
		log_error("bench: cannot write the key file %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cp_keys(struct cp_run *r)
{
	r->pub = calloc(r->o.nodes, sizeof(*r->pub));
	if (!r->pub) {
		log_error("bench: out of memory for %u keys", r->o.nodes);
		return -1;
	}
	for (unsigned int i = 0; i < r->o.nodes; i++) {
		uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];
		int err = wgkey_generate(priv), ret = 0;

		if (err < 0) {
			log_error("bench: cannot generate a WireGuard key: %s", strerror(-err));
			return -1;
		}
		wgkey_public(pub, priv);
		wgkey_to_base64(r->pub[i], pub);
		if (i == 0)
			ret = write_key(r->key, priv);
		explicit_bzero(priv, sizeof(priv));
		if (ret < 0)
			return -1;
	}
	return 0;
}

static json_t *nodes_json(const struct cp_run *r)
{
	json_t *nodes = json_array();

	for (unsigned int i = 0; nodes && i < r->o.nodes; i++) {
		char name[16], ul[32], fa[32];

		snprintf(name, sizeof(name), "n%u", i + 1);
		underlay_of(i, ul, sizeof(ul));
		fabric_of(i, fa, sizeof(fa));
		if (json_array_append_new(nodes, json_pack("{s:s, s:s, s:s, s:s}", "name", name,
							   "underlay", ul, "fabric_address", fa,
							   "public_key", r->pub[i])) < 0) {
			json_decref(nodes);
			return NULL;
		}
	}
	return nodes;
}

/* The zones of one transport: n vnets, CP_ZONE_VNETS a zone. */
static int add_zones(json_t *zones, bool secure, unsigned int n)
{
	json_t *zone = NULL, *vnets = NULL;

	for (unsigned int k = 0; k < n; k++) {
		char name[16];

		if (k % CP_ZONE_VNETS == 0) {
			snprintf(name, sizeof(name), "%c%u", secure ? 's' : 'p', k / CP_ZONE_VNETS);
			vnets = json_array();
			zone = json_pack("{s:s, s:s, s:i, s:o}", "name", name, "transport",
					 secure ? "secure" : "plain", "mtu", CP_ZONE_MTU, "vnets",
					 vnets);
			if (!zone || json_array_append_new(zones, zone) < 0)
				return -1;
		}
		snprintf(name, sizeof(name), "v%u", vni_of(secure, k));
		if (json_array_append_new(vnets, json_pack("{s:s, s:i}", "name", name, "vni",
							   (json_int_t)vni_of(secure, k))) < 0)
			return -1;
	}
	return 0;
}

void cp_plain_bridge(unsigned int k, char *out, size_t len)
{
	snprintf(out, len, "v%u", vni_of(false, k));
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cp_write_definition(const struct cp_run *r, unsigned int extra, double *renamed_at)
{
	json_t *def, *zones = json_array(), *nodes = nodes_json(r);
	int ret = -1;

	def = json_pack("{s:i, s:s, s:{s:s, s:i, s:i, s:i}, s:o, s:o}", "version", 1, "cluster",
			CP_CLUSTER, "fabric", "prefix", "10.255.0.0/16", "listen_port", 51820,
			"keepalive", 25, "underlay_mtu", 1500, "nodes", nodes, "zones", zones);
	char tmp[sizeof(r->def) + 8];

	/* renamed into place: a daemon watching the file reads it whole, once */
	snprintf(tmp, sizeof(tmp), "%s.new", r->def);
	if (def && add_zones(zones, false, r->plain + extra) == 0 &&
	    add_zones(zones, true, r->secure) == 0 && json_dump_file(def, tmp, JSON_COMPACT) == 0 &&
	    rename(tmp, r->def) == 0)
		ret = 0;
	if (renamed_at)
		*renamed_at = mono_s();
	if (ret < 0)
		log_error("bench: cannot write the definition %s", r->def);
	json_decref(def);
	return ret;
}

/* One vnet's links, as `ip -batch` lines. */
static void links_of(FILE *f, bool secure, unsigned int k)
{
	const char *alias = OWNER_PREFIX CP_CLUSTER;
	unsigned int vni = vni_of(secure, k);
	char local[32];

	if (secure)
		fabric_of(0, local, sizeof(local));
	else
		underlay_of(0, local, sizeof(local));
	const char *vx = secure ? "vs" : "vx";

	/* as fabricd: created down, then the owner mark (no IPv6 link-local), then up */
	fprintf(f, "link add v%u mtu %u type bridge\n", vni, CP_ZONE_MTU);
	fprintf(f, "link set dev v%u alias %s addrgenmode none\n", vni, alias);
	fprintf(f, "link set dev v%u up\n", vni);
	fprintf(f,
		"link add %s%u mtu %u master v%u type vxlan id %u dstport %u local %s nolearning\n",
		vx, vni, CP_ZONE_MTU, vni, vni, secure ? 4790 : 4789, local);
	fprintf(f, "link set dev %s%u alias %s addrgenmode none\n", vx, vni, alias);
	fprintf(f, "link set dev %s%u up\n", vx, vni);
	fprintf(f, "link set dev %s%u type bridge_slave isolated on\n", vx, vni);
	if (secure)
		return;
	/* a plain vnet's mute standby on the secure port (engine/switch.c) */
	fabric_of(0, local, sizeof(local));
	fprintf(
	    f,
	    "link add vs%u mtu %u master v%u type vxlan id %u dstport 4790 local %s nolearning\n",
	    vni, CP_ZONE_MTU, vni, vni, local);
	fprintf(f, "link set dev vs%u alias %s addrgenmode none\n", vni, alias);
	fprintf(f, "link set dev vs%u up\n", vni);
	fprintf(f,
		"link set dev vs%u type bridge_slave isolated on learning off flood off "
		"mcast_flood off bcast_flood off\n",
		vni);
}

/* One vnet's flood entries, as `bridge -batch` lines. */
static void fdb_of(FILE *f, const struct cp_run *r, bool secure, unsigned int k)
{
	unsigned int vni = vni_of(secure, k);

	for (unsigned int i = 1; i < r->o.nodes; i++) {
		char dst[32];

		if (secure)
			fabric_of(i, dst, sizeof(dst));
		else
			underlay_of(i, dst, sizeof(dst));
		fprintf(f, "fdb append 00:00:00:00:00:00 dev %s%u dst %s\n", secure ? "vs" : "vx",
			vni, dst);
	}
}

int cp_write_batches(const struct cp_run *r)
{
	FILE *links = fopen(r->ref_links, "we"), *fdb = fopen(r->ref_fdb, "we"),
	     *del = fopen(r->ref_del, "we");
	int ret = links && fdb && del ? 0 : -1;

	for (unsigned int t = 0; !ret && t < 2; t++) {
		unsigned int n = t ? r->secure : r->plain;

		for (unsigned int k = 0; k < n; k++) {
			links_of(links, t, k);
			fdb_of(fdb, r, t, k);
			fprintf(del, "link delete %s%u\nlink delete v%u\n", t ? "vs" : "vx",
				vni_of(t, k), vni_of(t, k));
			if (!t)
				fprintf(del, "link delete vs%u\n", vni_of(t, k));
		}
	}
	if (links && fclose(links))
		ret = -1;
	if (fdb && fclose(fdb))
		ret = -1;
	if (del && fclose(del))
		ret = -1;
	if (ret < 0)
		log_error("bench: cannot write the iproute2 batch files in %s: %s", r->dir,
			  strerror(errno));
	return ret;
}
