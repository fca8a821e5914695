// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/plan_text.c - the op list for people: an op's object from its type
 * and payload, what it changes from the kind that planned it (struct
 * kind.describe) and its note. Ops store no text; it is made here when shown.
 */
#include <stdio.h>
#include <string.h>

#include "definition/wgkey.h"
#include "base/log.h"
#include "engine/plan.h"
#include "kinds/carry.h"
#include "kinds/kind.h"

/* What an op acts on, from its type and payload: "vxlan vx100", "fdb vx100 remote 192.0.2.2". */
static void op_object(const struct op *op, char *buf, size_t len)
{
	char a[IP_ADDR_STRLEN];
	const struct kind *k = kind_by_id(op->kind);

	switch ((enum op_type)op->type) {
	case OP_BRIDGE_CREATE:
		snprintf(buf, len, "bridge %s", op->ifname);
		return;
	case OP_VXLAN_CREATE:
		snprintf(buf, len, "vxlan %s", op->ifname);
		return;
	case OP_LINK_DELETE:
		snprintf(buf, len, "%s %s", op->u.del.kind[0] ? op->u.del.kind : "link",
			 op->u.del.name);
		return;
	case OP_FDB_ADD:
	case OP_FDB_DEL: {
		const uint8_t *m = op->u.fdb.mac;

		if (m[0] | m[1] | m[2] | m[3] | m[4] | m[5])
			snprintf(buf, len, "fdb %s mac %02x:%02x:%02x:%02x:%02x:%02x remote %s",
				 op->ifname, m[0], m[1], m[2], m[3], m[4], m[5],
				 ip_addr_str(&op->u.fdb.dst, a, sizeof(a)));
		else
			snprintf(buf, len, "fdb %s remote %s", op->ifname,
				 ip_addr_str(&op->u.fdb.dst, a, sizeof(a)));
		return;
	}
	case OP_ADDR_ADD:
	case OP_ADDR_DEL:
		snprintf(buf, len, "address %s/%u on %s",
			 ip_addr_str(&op->u.prefix.addr, a, sizeof(a)), op->u.prefix.len,
			 op->ifname);
		return;
	case OP_PREFIX_ROUTE: {
		struct ip_prefix net = ip_prefix_network(&op->u.prefix);

		snprintf(buf, len, "route %s/%u dev %s", ip_addr_str(&net.addr, a, sizeof(a)),
			 net.len, op->ifname);
		return;
	}
	case OP_WG_PEER:
		if (op->u.peer.name) {
			snprintf(buf, len, "peer %s", op->u.peer.name);
		} else {
			/* a peer no node has: named by its key's start, as `wg` abbreviates */
			char b64[WGKEY_B64_LEN] = "";

			if (op->u.peer.have)
				wgkey_to_base64(b64, op->u.peer.have->public_key);
			snprintf(buf, len, "peer %.8s...", b64);
		}
		return;
	case OP_CARRY_RULE:
		snprintf(buf, len, "rule %s fwmark 0x%x/0x%x lookup %u",
			 op->u.family == AF_INET6 ? "ipv6" : "ipv4", CARRY_MARK, CARRY_MARK_MASK,
			 CARRY_TABLE);
		return;
	case OP_CARRY_ROUTE:
		snprintf(buf, len, "route %s default dev %s table %u",
			 op->u.family == AF_INET6 ? "ipv6" : "ipv4", op->ifname, CARRY_TABLE);
		return;
	case OP_CARRY_RP_FILTER:
		snprintf(buf, len, "sysctl net.ipv4.conf.%s.rp_filter", op->ifname);
		return;
	default:
		/* the rest name their kind: "bridge vnet1", "fabric wgfab0", the guard's table */
		snprintf(buf, len, "%s%s%s", k ? k->noun : "", op->ifname[0] ? " " : "",
			 op->ifname);
	}
}

void op_describe(const struct op *op, struct op_text *t)
{
	const struct kind *k = kind_by_id(op->kind);

	op_object(op, t->object, sizeof(t->object));
	t->detail[0] = '\0';
	if (k && k->describe)
		k->describe(op, t->detail, sizeof(t->detail));
	if (op->note)
		text_add(t->detail, sizeof(t->detail), "%s", op->note);
}

static void print_op(const struct op *op, FILE *f)
{
	struct op_text t;

	op_describe(op, &t);
	fprintf(f, "%c %s: %s%s%s%s\n", (char)op->verb, t.object,
		op_verb_word((enum op_verb)op->verb), t.detail[0] ? " (" : "", t.detail,
		t.detail[0] ? ")" : "");
}

void plan_print(const struct plan *p, FILE *f)
{
	for (size_t i = 0; i < p->n; i++)
		print_op(&p->ops[i], f);
	for (size_t i = 0; i < p->n_later; i++) {
		fprintf(f, "later, in %lld s: ", p->later[i].due_in);
		print_op(&p->later[i], f);
	}
}

/*
 * Guests learn no MTU by themselves: a bridge whose MTU goes down (an
 * mtu_policy "max" zone switched to secure, a smaller underlay) leaves them
 * sending frames it now drops. Said once for the apply, as the daemon says
 * it per zone (daemon/report.c).
 */
/* The bridges whose MTU the plan lowers (down) or raises, and the first of them. */
static const struct op *bridge_mtus(const struct plan *p, bool down, size_t *n)
{
	const struct op *first = NULL;

	*n = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (op->kind != KIND_BRIDGE || op->type != OP_LINK_CHANGE ||
		    !(op->u.link.mask & LINK_SET_MTU) || op->u.link.old_mtu == op->u.link.mtu ||
		    (op->u.link.old_mtu > op->u.link.mtu) != down)
			continue;
		first = first ? first : op;
		(*n)++;
	}
	return first;
}

void plan_warn_lowered_mtus(const struct plan *p, const char *node)
{
	size_t n;
	const struct op *first = bridge_mtus(p, true, &n);

	if (first)
		log_warn("%s: the MTU of %zu vnet bridge%s goes down (%s%s: %u -> %u): their "
			 "guests must lower theirs to match, or lose larger frames",
			 node, n, n == 1 ? "" : "s", first->ifname, n > 1 ? " and others" : "",
			 first->u.link.old_mtu, first->u.link.mtu);
	/* the daemon says it per zone (report_mtus); a one-shot apply said nothing */
	first = bridge_mtus(p, false, &n);
	if (first)
		log_info("%s: the MTU of %zu vnet bridge%s goes up (%s%s: %u -> %u): their guests "
			 "may raise theirs to match",
			 node, n, n == 1 ? "" : "s", first->ifname, n > 1 ? " and others" : "",
			 first->u.link.old_mtu, first->u.link.mtu);
}
