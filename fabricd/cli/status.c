// SPDX-License-Identifier: GPL-2.0-or-later
/* status.c - the fabric, zones and vnets as the kernel has them, and the drift. */
#include <jansson.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/status_evpn.h"
#include "cli/commands.h"
#include "cli/status_probe.h"
#include "cli/status_dot.h"
#include "base/log.h"
#include "engine/session.h"
#include "kinds/fabric.h"
#include "definition/wgkey.h"

static const char *node_by_key(const struct cluster *c, const uint8_t *key)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (!memcmp(c->nodes[i].public_key, key, WG_KEY_LEN))
			return c->nodes[i].name;
	}
	return NULL;
}

static json_t *json_endpoint(const struct sockaddr_storage *ss)
{
	struct ip_addr a;
	uint16_t port = 0;
	char ip[IP_ADDR_STRLEN], buf[IP_ADDR_STRLEN + 10];

	if (!ss->ss_family || ip_addr_from_sockaddr((const struct sockaddr *)ss, &a, &port) < 0)
		return json_null();
	ip_addr_str(&a, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), a.family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
	return json_string(buf);
}

static json_t *json_prefix(const struct ip_prefix *p)
{
	char ip[IP_ADDR_STRLEN], buf[IP_ADDR_STRLEN + 5];

	snprintf(buf, sizeof(buf), "%s/%u", ip_addr_str(&p->addr, ip, sizeof(ip)), p->len);
	return json_string(buf);
}

/*
 * WireGuard roaming: a plan op that would only set a peer's endpoint back to
 * the definition's while WireGuard has a live session with it (a handshake
 * within 180 s, REJECT_AFTER_TIME) at the endpoint it learned from that
 * peer's authenticated packets. The daemon keeps such an endpoint (README,
 * "WireGuard roaming"): status says "roamed", not drift.
 */
static bool op_is_roam(const struct op *op, time_t now)
{
	const struct wg_peer *have = op->type == OP_WG_PEER ? op->u.peer.have : NULL;

	return have && op->verb == VERB_CHANGE && op->u.peer.want &&
	       (op->u.peer.flags & ~WGPEER_UPDATE_ONLY) == WGPEER_HAS_ENDPOINT &&
	       have->last_handshake_sec && now - have->last_handshake_sec <= 180;
}

/* The roam op of peer p in plan, or NULL. */
static const struct op *roam_of(const struct plan *plan, const struct wg_peer *p, time_t now)
{
	for (size_t i = 0; i < plan->n; i++)
		if (op_is_roam(&plan->ops[i], now) && plan->ops[i].u.peer.have == p)
			return &plan->ops[i];
	return NULL;
}

static json_t *status_peers(const struct session *s)
{
	const struct wg_device *wg = s->have.wg;
	json_t *peers = json_array();
	time_t now = time(NULL);

	for (size_t i = 0; wg && i < wg->n_peers; i++) {
		const struct wg_peer *p = &wg->peers[i];
		const char *name = node_by_key(s->cluster, p->public_key);
		const struct op *roam;
		char key[WGKEY_B64_LEN];
		json_t *allowed = json_array();

		wgkey_to_base64(key, p->public_key);
		for (size_t a = 0; a < p->n_allowed_ips; a++)
			json_array_append_new(allowed, json_prefix(&p->allowed_ips[a]));
		json_array_append_new(
		    peers,
		    json_pack("{s:o, s:s, s:o, s:o, s:o, s:I, s:I, s:I}", "node",
			      name ? json_string(name) : json_null(), "public_key", key, "endpoint",
			      json_endpoint(&p->endpoint), "allowed_ips", allowed,
			      "latest_handshake_age",
			      p->last_handshake_sec ? json_integer(now - p->last_handshake_sec)
						    : json_null(),
			      "keepalive", (json_int_t)p->keepalive, "rx_bytes",
			      (json_int_t)p->rx_bytes, "tx_bytes", (json_int_t)p->tx_bytes));
		if ((roam = roam_of(&s->plan, p, now)))
			json_object_set_new(json_array_get(peers, json_array_size(peers) - 1),
					    "definition_endpoint",
					    json_endpoint(&roam->u.peer.want->endpoint));
	}
	return peers;
}

static json_t *status_fabric(const struct session *s)
{
	const struct link_obs *l = link_find(&s->have.links, FABRIC_IFNAME);
	const struct link_obs *fabric = l && fabric_link_is_wireguard(l) ? l : NULL;
	json_t *addrs = json_array(), *o;

	for (size_t i = 0; fabric && i < s->have.fabric_addrs.n; i++)
		json_array_append_new(addrs, json_prefix(&s->have.fabric_addrs.entries[i].prefix));
	o = json_pack("{s:s, s:b, s:s, s:o, s:o, s:o, s:o}", "ifname", FABRIC_IFNAME, "present",
		      fabric != NULL, "backend", wg_backend_name(s->r.backend), "mtu",
		      fabric ? json_integer(fabric->mtu) : json_null(), "listen_port",
		      fabric && s->have.wg ? json_integer(s->have.wg->listen_port) : json_null(),
		      "addresses", addrs, "peers", fabric ? status_peers(s) : json_array());
	/* another link holds the name (a conflict): what it is, not a fabric it is not */
	if (l && !fabric)
		json_object_set_new(o, "held_by", json_string(l->kind[0] ? l->kind : "link"));
	return o;
}

static json_t *status_link(const struct session *s, const char *name, bool vxlan)
{
	const struct link_obs *l = link_find(&s->have.links, name);
	json_t *o;

	if (!l)
		return json_pack("{s:s, s:b}", "name", name, "present", 0);
	o = json_pack("{s:s, s:b, s:I, s:b, s:b}", "name", name, "present", 1, "mtu",
		      (json_int_t)l->mtu, "up", (l->flags & IFF_UP) != 0, "owned",
		      link_is_owned(l, s->r.owner));
	if (vxlan) {
		json_t *remotes = json_array();
		char a[IP_ADDR_STRLEN];
		struct fdb_cursor c;
		struct ip_addr dst;

		fdb_cursor_start(&s->have.fdb, l->ifindex, &c);
		while (fdb_next(&s->have.fdb, &c, &dst))
			json_array_append_new(remotes,
					      json_string(ip_addr_str(&dst, a, sizeof(a))));
		json_object_set_new(o, "vni", json_integer(l->vni));
		json_object_set_new(o, "port", json_integer(l->port));
		json_object_set_new(o, "remotes", remotes);
	}
	return o;
}

/*
 * A transport switch of v in progress on this node, as engine/switch.c's
 * stage notes on its devices say; JSON null when none is.
 */
static json_t *status_switch(const struct session *s, const struct desired_vnet *v)
{
	static const struct {
		const char *key, *stage;
		bool other; /* on the device of the transport the vnet left */
		const char *what;
	} stages[] = {
	    {LINK_RETIRE_NOTE, "retire", true,
	     "moved to secure: the plain device still receives, then goes"},
	    {LINK_HOLD_NOTE, "hold", true, "moved to plain: the secure device still sends"},
	    {LINK_CLEAR_NOTE, "clear", false, "moved to secure: clear text still taken"},
	    {LINK_CARRY_NOTE, "carry", false, "moved to plain: still carried through WireGuard"},
	};
	struct timespec boot;

	clock_gettime(CLOCK_BOOTTIME, &boot);
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		const char *dev = stages[i].other ? v->other_vxlan : v->vxlan;
		const struct link_obs *l = dev[0] ? link_find(&s->have.links, dev) : NULL;
		struct stage_note n;
		long long left;

		if (!l || !link_stage_note(l, s->r.owner, stages[i].key, &n))
			continue;
		left = n.at ? n.at - (long long)boot.tv_sec : n.after - (long long)time(NULL);
		return json_pack("{s:s, s:s, s:s, s:I, s:I}", "stage", stages[i].stage, "device",
				 dev, "what", stages[i].what, "ends_in_s",
				 (json_int_t)(left > 0 ? left : 0), "grace_s", (json_int_t)n.grace);
	}
	return json_null();
}

/*
 * The ports of bridge br (guests' taps and veths: fabricd's own VXLAN ports
 * are at the zone MTU) whose MTU differs from the zone's, under key: over
 * it, the kernel drops their larger frames at the VXLAN port; under it, the
 * larger frames sent to them (the bridge does not forward a frame larger
 * than its port's MTU). Neither has a counter, so nothing else says so.
 */
static void add_ports_off_mtu(const struct session *s, json_t *bridge, const char *br_name,
			      unsigned int mtu, bool over, const char *key)
{
	const struct link_obs *br = link_find(&s->have.links, br_name);
	json_t *ports = json_array();

	for (size_t i = 0; br && mtu && i < s->have.links.n; i++) {
		const struct link_obs *l = &s->have.links.links[i];

		if (l->master == br->ifindex && (over ? l->mtu > mtu : l->mtu < mtu) &&
		    !link_is_owned(l, s->r.owner))
			json_array_append_new(ports, json_pack("{s:s, s:I}", "name", l->name, "mtu",
							       (json_int_t)l->mtu));
	}
	if (json_array_size(ports))
		json_object_set_new(bridge, key, ports);
	else
		json_decref(ports);
}

static json_t *status_zones(const struct session *s)
{
	const struct cluster *c = s->cluster;
	json_t *zones = json_array();

	for (size_t zi = 0; zi < s->want.n_zones; zi++) {
		const struct desired_zone *dz = &s->want.zones[zi];
		const struct zone *z = &c->zones[dz->zone];
		json_t *vnets = json_array();

		for (size_t vi = 0; vi < s->want.n_vnets; vi++) {
			const struct desired_vnet *v = &s->want.vnets[vi];

			json_t *bridge;

			if (v->zone != dz->zone)
				continue;
			bridge = status_link(s, v->name, false);
			/* Proxmox's (zone "bridges": "existing"): not fabricd's, and rightly */
			if (v->existing_bridge)
				json_object_set_new(bridge, "existing", json_true());
			add_ports_off_mtu(s, bridge, v->name, dz->mtu, true, "ports_over_mtu");
			add_ports_off_mtu(s, bridge, v->name, dz->mtu, false, "ports_under_mtu");
			json_array_append_new(vnets, json_pack("{s:s, s:I, s:o, s:o, s:o}", "name",
							       v->name, "vni", (json_int_t)v->vni,
							       "bridge", bridge, "vxlan",
							       status_link(s, v->vxlan, true),
							       "switch", status_switch(s, v)));
			/* the plain vnet's mute secure device, which takes a switch's first frames
			 */
			if (v->standby)
				json_object_set_new(
				    json_array_get(vnets, json_array_size(vnets) - 1), "standby",
				    status_link(s, v->other_vxlan, true));
		}
		/* null: unknown, the underlay MTU could not be measured (see conflicts) */
		json_array_append_new(zones,
				      json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", z->name,
						"transport", transport_name(z->transport),
						"mtu_policy", mtu_policy_name(z->mtu_policy), "mtu",
						dz->mtu ? json_integer(dz->mtu) : json_null(),
						"vnets", vnets));
	}
	return zones;
}

static json_t *status_drift(const struct plan *p)
{
	json_t *drift = json_array();
	time_t now = time(NULL);

	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];
		char verb[2] = {(char)op->verb, '\0'};
		struct op_text t;

		if (op_is_roam(op, now)) /* shown on its peer's line */
			continue;
		op_describe(op, &t);
		json_array_append_new(drift, json_pack("{s:s, s:s, s:s}", "change", verb, "object",
						       t.object, "detail", t.detail));
	}
	return drift;
}

/* The plan's changes that are drift: all but WireGuard's roaming. */
static size_t drift_count(const struct plan *p)
{
	time_t now = time(NULL);
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += !op_is_roam(&p->ops[i], now);
	return n;
}

/* What stops every change on the node (plan_build planned nothing past them). */
static json_t *status_conflicts(const struct diag *conflicts)
{
	json_t *list = json_array();

	for (size_t i = 0; i < conflicts->n; i++)
		json_array_append_new(list, json_string(conflicts->msgs[i]));
	return list;
}

static json_t *status_json(const struct session *s)
{
	/* null when it could not be measured (no route to the peers: see conflicts), as render */
	json_t *underlay = s->want.mtu.underlay ? json_integer(s->want.mtu.underlay) : json_null();

	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:b, s:o, s:o}", "cluster",
			 s->cluster->name, "node", s->cluster->nodes[s->self].name, "underlay_mtu",
			 underlay, "fabric", status_fabric(s), "zones", status_zones(s), "guard",
			 firewall_status_json(s->have.firewall, s->r.owner), "in_sync",
			 drift_count(&s->plan) == 0 && s->conflicts.n == 0, "drift",
			 status_drift(&s->plan), "conflicts", status_conflicts(&s->conflicts));
}

/* "; switching (moved to secure: ..., vx100): 12 s left of its grace period" */
static void print_switch(json_t *sw)
{
	if (!json_is_object(sw))
		return;
	printf("; switching (%s, %s): %lld s left of its grace period",
	       json_string_value(json_object_get(sw, "what")),
	       json_string_value(json_object_get(sw, "device")),
	       json_integer_value(json_object_get(sw, "ends_in_s")));
}

/* "guard inet fabricd: dropped plain 0, secure 0, wireguard 0, leak 0, forwarded 0 packets" */
static void print_guard(json_t *guard)
{
	json_t *counters = json_object_get(guard, "counters");

	printf("guard %s: ", json_string_value(json_object_get(guard, "table")));
	if (!json_is_true(json_object_get(guard, "present"))) {
		printf("absent\n");
		return;
	}
	printf("dropped");
	for (int i = 0; i < FW_N_COUNTERS; i++) {
		const char *name = firewall_counter_names[i];
		json_t *c = json_object_get(counters, name);

		printf("%s %s ", i ? "," : "", name + strlen("drop_"));
		if (c)
			printf("%lld", json_integer_value(json_object_get(c, "packets")));
		else
			printf("(missing)");
	}
	printf(" packets%s\n", json_is_true(json_object_get(guard, "owned")) ? "" : " (NOT OWNED)");
}

/* The headline's verdict: drift can be applied, a conflict stops every change. */
static const char *sync_words(json_t *j)
{
	bool drift = json_array_size(json_object_get(j, "drift")) > 0;
	bool conflicts = json_array_size(json_object_get(j, "conflicts")) > 0;

	if (json_is_true(json_object_get(j, "in_sync")))
		return "in sync with the definition";
	if (conflicts)
		return drift ? "DRIFT, and CONFLICTS that stop every change (see below)"
			     : "CONFLICTS that stop every change (see below)";
	return "DRIFT (see below)";
}

/* "fabric wgfab0 (userspace): mtu 1440, listen port 51820" and a line per peer */
static void print_fabric(json_t *fabric)
{
	json_t *peer;
	size_t i;

	if (json_is_string(json_object_get(fabric, "held_by"))) {
		printf("fabric %s: absent; a %s device that is not fabricd's has the name\n",
		       FABRIC_IFNAME, json_string_value(json_object_get(fabric, "held_by")));
	} else if (!json_is_true(json_object_get(fabric, "present"))) {
		printf("fabric %s: absent\n", FABRIC_IFNAME);
	} else {
		json_t *port = json_object_get(fabric, "listen_port");

		/* no port read: a device fabricd does not own, or one that does not answer */
		printf("fabric %s (%s): mtu %lld, ", FABRIC_IFNAME,
		       json_string_value(json_object_get(fabric, "backend")),
		       json_integer_value(json_object_get(fabric, "mtu")));
		if (json_is_integer(port))
			printf("listen port %lld\n", json_integer_value(port));
		else
			printf("listen port not read (not fabricd's, or its wireguard-go does not "
			       "answer: see the conflicts)\n");
	}
	json_array_foreach(json_object_get(fabric, "peers"), i, peer)
	{
		json_t *age = json_object_get(peer, "latest_handshake_age");
		json_t *node = json_object_get(peer, "node");
		json_t *ep = json_object_get(peer, "endpoint");
		char hs[32];

		/* WireGuard drops a session 180 s after its handshake (REJECT_AFTER_TIME) */
		if (json_is_integer(age))
			snprintf(hs, sizeof(hs), "%llds ago%s", json_integer_value(age),
				 json_integer_value(age) > 180 ? " EXPIRED" : "");
		else
			snprintf(hs, sizeof(hs), "never");
		json_t *defined = json_object_get(peer, "definition_endpoint");

		printf("  peer %-12s endpoint %-22s handshake %-16s rx %lld B, tx %lld B",
		       json_is_string(node) ? json_string_value(node) : "(unknown)",
		       json_is_string(ep) ? json_string_value(ep) : "none", hs,
		       json_integer_value(json_object_get(peer, "rx_bytes")),
		       json_integer_value(json_object_get(peer, "tx_bytes")));
		if (json_is_string(defined))
			printf("; roamed: WireGuard learned it from the peer's packets (the "
			       "definition says %s; the daemon keeps it, apply would set it back)",
			       json_string_value(defined));
		printf("\n");
	}
}

/* A link that has a wanted name but is not fabricd's (and not Proxmox's bridge): a conflict. */
static const char *foreign_words(json_t *link)
{
	return json_is_false(json_object_get(link, "owned")) &&
		       !json_is_true(json_object_get(link, "existing"))
		   ? " (NOT fabricd's: see the conflict)"
		   : "";
}

/* "up", "DOWN" or "absent", and whose it is when not fabricd's. */
static const char *link_words(json_t *link)
{
	static char words[64];

	if (!json_is_true(json_object_get(link, "present")))
		return json_is_true(json_object_get(link, "existing"))
			   /* fabricd waits for it: the vnet is not carried until then */
			   ? "absent (its manager has not made it: fabricd's port joins once "
			     "Proxmox's SDN Apply or ifreload -a does)"
			   : "absent";
	snprintf(words, sizeof(words), "%s%s",
		 json_is_true(json_object_get(link, "up")) ? "up" : "DOWN", foreign_words(link));
	return words;
}

/* "; port tap100i0 MTU 1500 OVER the zone's 1390: ..." and those UNDER it */
static void print_ports_off_mtu(json_t *bridge, const char *mtu)
{
	json_t *p;
	size_t i;

	json_array_foreach(json_object_get(bridge, "ports_over_mtu"), i, p)
	    printf("; port %s MTU %lld OVER the zone's %s: its frames over %s are dropped, "
		   "not sent to the other nodes (give it MTU %s)",
		   json_string_value(json_object_get(p, "name")),
		   json_integer_value(json_object_get(p, "mtu")), mtu, mtu, mtu);
	json_array_foreach(json_object_get(bridge, "ports_under_mtu"), i, p)
	{
		long long own = json_integer_value(json_object_get(p, "mtu"));

		printf("; port %s MTU %lld UNDER the zone's %s: frames over %lld sent to it are "
		       "dropped (give it MTU %s)",
		       json_string_value(json_object_get(p, "name")), own, mtu, own, mtu);
	}
}

/* ", standby vs100" for a plain vnet, with what is wrong with it */
static void print_standby(json_t *standby)
{
	json_t *remote;
	size_t r;

	if (!json_is_object(standby))
		return;
	printf(", standby %s%s", json_string_value(json_object_get(standby, "name")),
	       json_is_true(json_object_get(standby, "present")) ? foreign_words(standby)
								 : " (absent)");
	json_array_foreach(json_object_get(standby, "remotes"), r, remote)
	    printf("%s%s", r ? ", " : " -> ", json_string_value(remote));
}

/*
 * The zone's MTU, or "unknown" when the underlay cannot be measured; then what
 * its bridges keep meanwhile (apply changes nothing, the daemon keeps the last
 * MTU in force), so a reader does not take "unknown" for broken guests.
 */
static void zone_mtu_words(const json_t *zone, char *buf, size_t len)
{
	json_t *mtu = json_object_get(zone, "mtu"), *vnet;
	json_int_t low = 0, high = 0;
	size_t i;

	if (json_is_integer(mtu)) {
		snprintf(buf, len, "%lld", json_integer_value(mtu));
		return;
	}
	json_array_foreach(json_object_get(zone, "vnets"), i, vnet)
	{
		json_t *bridge = json_object_get(vnet, "bridge");
		json_int_t m = json_integer_value(json_object_get(bridge, "mtu"));

		if (!json_is_true(json_object_get(bridge, "present")) || m <= 0)
			continue;
		low = !low || m < low ? m : low;
		high = m > high ? m : high;
	}
	if (!low)
		snprintf(buf, len, "unknown");
	else if (low == high)
		snprintf(buf, len, "unknown, its bridges keep %lld", (long long)low);
	else
		snprintf(buf, len, "unknown, its bridges keep %lld-%lld", (long long)low,
			 (long long)high);
}

static void print_text(json_t *j)
{
	json_t *fabric = json_object_get(j, "fabric"), *evpn = json_object_get(j, "evpn"), *v, *z;
	size_t i, k;

	/* zebra dead leaves the kernel as fabricd made it: said here, not only in the evpn part */
	printf("node %s of cluster %s: %s%s\n", json_string_value(json_object_get(j, "node")),
	       json_string_value(json_object_get(j, "cluster")), sync_words(j),
	       json_is_object(evpn) && !json_is_true(json_object_get(evpn, "frr_running"))
		   ? "; FRR NOT RUNNING: its EVPN zones learn and announce nothing"
		   : "");
	print_fabric(fabric);
	json_array_foreach(json_object_get(j, "zones"), i, z)
	{
		char mtu_text[96];

		zone_mtu_words(z, mtu_text, sizeof(mtu_text));
		printf("zone %s: transport %s, mtu %s (%s)\n",
		       json_string_value(json_object_get(z, "name")),
		       json_string_value(json_object_get(z, "transport")), mtu_text,
		       json_string_value(json_object_get(z, "mtu_policy")));
		json_array_foreach(json_object_get(z, "vnets"), k, v)
		{
			json_t *br = json_object_get(v, "bridge"),
			       *vx = json_object_get(v, "vxlan");
			json_t *remote;
			size_t r;

			printf("  vnet %s vni %lld: bridge %s, vxlan %s%s",
			       json_string_value(json_object_get(v, "name")),
			       json_integer_value(json_object_get(v, "vni")), link_words(br),
			       json_string_value(json_object_get(vx, "name")),
			       json_is_true(json_object_get(vx, "present")) ? foreign_words(vx)
									    : " (absent)");
			json_array_foreach(json_object_get(vx, "remotes"), r, remote)
			    printf("%s%s", r ? ", " : " -> ", json_string_value(remote));
			print_standby(json_object_get(v, "standby"));
			print_switch(json_object_get(v, "switch"));
			print_ports_off_mtu(br, mtu_text);
			printf("\n");
		}
	}
	print_guard(json_object_get(j, "guard"));
	status_probes_print(json_object_get(j, "probes"),
			    json_string_value(json_object_get(j, "node")));
	json_array_foreach(json_object_get(j, "drift"), i, v)
	{
		const char *detail = json_string_value(json_object_get(v, "detail"));

		printf("drift: %s %s%s%s\n", json_string_value(json_object_get(v, "change")),
		       json_string_value(json_object_get(v, "object")),
		       detail && *detail ? ": " : "", detail ? detail : "");
	}
	json_array_foreach(json_object_get(j, "conflicts"), i, v)
	    printf("conflict: %s\n", json_string_value(v));
}

int cmd_status(const struct options *o)
{
	struct session s;
	json_t *j;
	int ret = 1;

	if ((o->json && (o->dot || o->svg)) || (o->dot && o->svg)) {
		log_error("status: give one of --json, --dot and --svg");
		return 1;
	}
	/* a conflict stops apply, not status: it shows the node and the conflict */
	if (session_open_report(&s, o) < 0 || (session_plan(&s) < 0 && !s.conflicts.n))
		goto out;
	/* a key file apply would refuse stops every change: a conflict */
	session_check_private_key(&s, o);
	j = status_json(&s);
	status_evpn_add(o, s.cluster, s.self, j);
	json_object_set_new(j, "probes",
			    status_probes_json(o, s.cluster, s.cluster->nodes[s.self].name));
	if (o->dot || o->svg) {
		ret = status_dot(j, s.cluster, o->svg);
		json_decref(j);
		goto out;
	}
	if (o->json) {
		json_dumpf(j, stdout,
			   JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		fputc('\n', stdout);
	} else {
		print_text(j);
		status_evpn_print(j);
	}
	json_decref(j);
	ret = 0;
out:
	session_free(&s);
	return ret;
}
