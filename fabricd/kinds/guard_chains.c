// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard_chains.c - the chains of the `inet fabricd` table as nft text, and
 * each chain's summary line as the kernel's copy is read back (engine/guard_nl.c).
 *
 * Every rule carries a comment "fabricd HASH", HASH the first 24 bits of the
 * FNV-1a of its own text: a rule replaced, added or inserted by hand has no
 * such comment (or another rule's), so it differs from the summary even when
 * its verdict is the same. The summary shows each rule as its verdict and
 * that mark: "accept(1f2e3d)"; a rule without fabricd's comment is
 * "accept(by hand)". Pure: no kernel access.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"
#include "kinds/carry.h"
#include "kinds/guard_priv.h"

/* the input hook's chains, one per UDP port of fabricd's */
#define CHAIN_PLAIN_IN	   "plain_vxlan_in"
#define CHAIN_SECURE_IN	   "secure_vxlan_in"
#define CHAIN_WIREGUARD_IN "wireguard_in"

/* The chain being written: its text goes to b, its summary line to summary (when given). */
struct chain_out {
	struct sbuf *b;
	struct strlist *summary;
	struct sbuf line;
	int err;
};

/* "chain NAME {" and, for a base chain, its hook; the summary line starts as the reader's. */
static void chain_begin(struct chain_out *o, const char *name, const char *type, const char *hook,
			const char *prio_text, int prio)
{
	sbuf_printf(o->b, "\n\tchain %s {\n", name);
	sbuf_printf(&o->line, "chain %s:", name);
	if (hook) {
		sbuf_printf(o->b, "\t\ttype %s hook %s priority %s; policy accept;\n", type, hook,
			    prio_text);
		sbuf_printf(&o->line, " %s %s %d accept", type, hook, prio);
	}
	sbuf_printf(&o->line, ", rules:");
}

/* One rule: its text with fabricd's comment, and "VERDICT(HASH)" in the summary line. */
static void rule(struct chain_out *o, const char *verdict, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rule(struct chain_out *o, const char *verdict, const char *fmt, ...)
{
	char text[512];
	unsigned mark;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	mark = (unsigned)(fnv1a(FNV1A_INIT, text, strlen(text)) & FIREWALL_RULE_MARK_MASK);
	sbuf_printf(o->b, "\t\t%s comment \"" FIREWALL_RULE_MARK "%06x\"\n", text, mark);
	sbuf_printf(&o->line, " %s(%06x)", verdict, mark);
}

static void chain_end(struct chain_out *o)
{
	char *line = sbuf_take(&o->line);

	sbuf_printf(o->b, "\t}\n");
	if (!line)
		o->err = -ENOMEM;
	else if (o->summary && !o->err)
		o->err = strlist_add(o->summary, line);
	free(line);
}

/* A secure EVPN vnet's VXLAN: marked into WireGuard, dropped on any other device. */
static void carry_chains(struct chain_out *o, const struct firewall_chain_params *p)
{
	/* the kernel routes a local packet again when a route chain changes its mark */
	chain_begin(o, "carry", "route", "output", "mangle", -150);
	rule(o, "-",
	     "udp dport %u @th,96,24 @carried_vnis meta mark set meta mark & 0x%08x | 0x%08x",
	     PLAIN_VXLAN_PORT, ~CARRY_MARK_MASK, CARRY_MARK);
	chain_end(o);
	/* after that route: output-hook rules still see the device chosen before it */
	chain_begin(o, "postrouting", "filter", "postrouting", "-10", -10);
	rule(o, "drop",
	     "udp dport %u @th,96,24 @carried_vnis oifname != \"%s\" counter name \"%s\" drop",
	     PLAIN_VXLAN_PORT, p->fabric_if, firewall_counter_names[FW_DROP_LEAK]);
	chain_end(o);
}

struct port_jump {
	unsigned port;
	const char *chain;
};

static int by_port(const void *a, const void *b)
{
	unsigned x = ((const struct port_jump *)a)->port, y = ((const struct port_jump *)b)->port;

	return (x > y) - (x < y);
}

/* The verdict map as the reader shows it: its elements by port. */
static void vmap_verdict(const struct firewall_chain_params *p, char *out, size_t len)
{
	struct port_jump to[3] = {{PLAIN_VXLAN_PORT, CHAIN_PLAIN_IN},
				  {p->secure_port, CHAIN_SECURE_IN},
				  {p->listen_port, CHAIN_WIREGUARD_IN}};
	size_t used;

	qsort(to, 3, sizeof(to[0]), by_port);
	used = (size_t)snprintf(out, len, "vmap{");
	for (int i = 0; i < 3 && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%u:jump:%s", i ? "," : "",
					 to[i].port, to[i].chain);
	if (used < len)
		snprintf(out + used, len - used, "}");
}

/*
 * A VXLAN port's chain: a member's VXLAN through WireGuard (and, on the plain
 * port, a secure EVPN member's, carried there), then a VNI no vnet of this
 * node has, which is another VXLAN's on the same port (a foreign device
 * beside; Proxmox's vxlan-port 4790 on the secure one), then the counted drop.
 */
static void vxlan_chain(struct chain_out *o, const struct firewall_chain_params *p,
			const char *name, bool carried, enum firewall_counter_id drop)
{
	const char *ip = p->underlay_family == AF_INET6 ? "ip6" : "ip";
	const char *fab_ip = p->fabric_family == AF_INET6 ? "ip6" : "ip";

	chain_begin(o, name, NULL, NULL, NULL, 0);
	if (carried)
		rule(o, "accept", "iifname \"%s\" %s saddr . @th,96,24 @carried_members accept",
		     p->fabric_if, ip);
	rule(o, "accept", "iifname \"%s\" %s saddr . @th,96,24 @fabric_members accept",
	     p->fabric_if, fab_ip);
	rule(o, "accept", "@th,96,24 != @node_vnis accept");
	rule(o, "drop", "counter name \"%s\" drop", firewall_counter_names[drop]);
	chain_end(o);
}

/*
 * Input: plain VXLAN from a member is fabricd's bulk traffic, so it is
 * accepted by the chain's first rule (a port compare and one set lookup);
 * then one lookup of the UDP port sends the rest of fabricd's traffic to its
 * port's chain, and everything else on at once. The plain rule first saves
 * that packet the verdict map and the jump: in a lab built by hand the guard
 * cost 2-4 % of the plain path's throughput with them, about 1 % without
 * (README, "What fabricd itself costs").
 */
static void input_chains(struct chain_out *o, const struct firewall_chain_params *p)
{
	const char *ip = p->underlay_family == AF_INET6 ? "ip6" : "ip";
	char vmap[160];

	chain_begin(o, "input", "filter", "input", "-10", -10);
	/* the VNI is the 24 bits at byte 4 of the VXLAN header, 8 bytes into UDP */
	rule(o, "accept", "udp dport %u %s saddr . @th,96,24 @plain_members accept",
	     PLAIN_VXLAN_PORT, ip);
	vmap_verdict(p, vmap, sizeof(vmap));
	rule(o, vmap,
	     "udp dport vmap { %u : jump " CHAIN_PLAIN_IN ", %u : jump " CHAIN_SECURE_IN
	     ", %u : jump " CHAIN_WIREGUARD_IN " }",
	     PLAIN_VXLAN_PORT, p->secure_port, p->listen_port);
	chain_end(o);

	vxlan_chain(o, p, CHAIN_PLAIN_IN, true, FW_DROP_PLAIN);
	vxlan_chain(o, p, CHAIN_SECURE_IN, false, FW_DROP_SECURE);

	chain_begin(o, CHAIN_WIREGUARD_IN, NULL, NULL, NULL, 0);
	rule(o, "accept", "ip saddr @wireguard_peers_ip accept");
	rule(o, "accept", "ip6 saddr @wireguard_peers_ip6 accept");
	if (p->wg_any_family)
		rule(o, "accept", "meta nfproto %s accept",
		     p->wg_any_family == AF_INET6 ? "ipv6" : "ipv4");
	rule(o, "drop", "counter name \"%s\" drop", firewall_counter_names[FW_DROP_WIREGUARD]);
	chain_end(o);
}

/*
 * Output: two rules, each a port compare and its check; a secure VNI never
 * leaves as plain VXLAN, secure VXLAN only into WireGuard. Two compares cost
 * a plain packet less than a verdict map and a jump (the same measurement).
 */
static void output_chains(struct chain_out *o, const struct firewall_chain_params *p)
{
	chain_begin(o, "output", "filter", "output", "-10", -10);
	rule(o, "drop", "udp dport %u @th,96,24 @secure_vnis counter name \"%s\" drop",
	     PLAIN_VXLAN_PORT, firewall_counter_names[FW_DROP_LEAK]);
	/* a VNI of none of this node's vnets is another VXLAN's on the same port: not secure */
	rule(o, "drop",
	     "udp dport %u oifname != \"%s\" @th,96,24 @node_vnis counter name \"%s\" drop",
	     p->secure_port, p->fabric_if, firewall_counter_names[FW_DROP_LEAK]);
	chain_end(o);
}

/*
 * Forward: nothing goes into the fabric device but the node's own traffic.
 * Only an IPv6 fabric needs it: IPv4 drops a forwarded packet from a local
 * address itself, and only one from the node's fabric address gets through
 * WireGuard. Forwarded packets meet it (and with br_netfilter, bridged ones:
 * an IPv4 fabric's guests pay nothing).
 */
static void forward_chain(struct chain_out *o, const struct firewall_chain_params *p)
{
	chain_begin(o, "forward", "filter", "forward", "-10", -10);
	rule(o, "drop", "oifname \"%s\" counter name \"%s\" drop", p->fabric_if,
	     firewall_counter_names[FW_DROP_FORWARDED]);
	chain_end(o);
}

int firewall_render_chains(struct sbuf *b, const struct firewall_chain_params *p,
			   struct strlist *summary)
{
	struct chain_out o = {.b = b, .summary = summary};

	input_chains(&o, p);
	output_chains(&o, p);
	if (p->fabric_family == AF_INET6)
		forward_chain(&o, p);
	if (p->carry)
		carry_chains(&o, p);
	free(sbuf_take(&o.line));
	return o.err;
}
