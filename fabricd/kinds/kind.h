/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/kind.h - what every kind of kernel object offers the engine, one
 * contract for all: a kind (kinds/<kind>.c) exports a struct kind whose
 * parse() reads one kernel message into its table of the observed state,
 * plan() diffs the desired state against the observed one into plan ops,
 * encode() turns one of its ops into netlink messages, and describe() says
 * what the op changes, for people (engine/plan.c adds the object). An op
 * records the kind that planned it (op.kind): that kind describes and
 * encodes it. The messages go into a kind_encoder, which the engine backs
 * with a batch (engine/apply.c): a kind never sends, waits or resolves.
 *
 * Three kinds use the same signatures with fields of their own:
 * - guard: renders a whole table from the desired state and goes to
 *   libnftables, so it has no parse (libnftables' JSON) and no encode;
 * - fabric: WireGuard has two backends, so its ops other than the link's go
 *   through engine/apply.c (fabric_device_of, fabric_peer_of), not encode;
 * - frr: its state is a file (engine/frr.c reads and reloads it);
 * - carry: one kind for a policy rule, a route and a device setting, read
 *   by three requests (engine/observe.c), parsed by the one parse().
 * Their few ops a pass carry their detail in op.note; the kinds whose ops
 * come by the thousand (bridge, vxlan, fdb) describe from the payload.
 */
#ifndef FABRICD_KIND_H
#define FABRICD_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "definition/desired.h"
#include "engine/plan.h"
#include "netlink/nl.h"

struct reconcile;
struct observed;
struct vxlan_port;

struct kind_encoder {
	/* The next message, zeroed (NLM_F_REQUEST | NLM_F_ACK added); NULL when none fits. */
	struct nlmsghdr *(*msg)(struct kind_encoder *e, uint16_t type, uint16_t flags);
	/* Ends a message from msg(); its ACK is matched to the op being encoded. */
	void (*commit)(struct kind_encoder *e, struct nlmsghdr *nlh);
	/* The next n messages of at most bytes in all go to the kernel in one send. */
	void (*reserve)(struct kind_encoder *e, size_t n, size_t bytes);
	/* The ifindex of a link made earlier in this run, by name; 0 when there is none. */
	int (*ifindex)(struct kind_encoder *e, const char *name);
	/* An ifindex no link has now, for a create: 0 when none was found. */
	int (*fresh_ifindex)(struct kind_encoder *e);
	const char *owner; /* the owner mark a new link gets */
	bool ipv6;	   /* the kernel has IPv6 (booted without ipv6.disable=1) */
	char why[64];	   /* set by encode on failure, for the error message ("" if none) */
};

/*
 * What plan() reads: the pass's options, the desired and the observed state,
 * and for the kinds planned once per object (bridge, vxlan, fdb, ifaddr) that
 * object, set by the caller. A kind reads only the fields it documents.
 */
struct kind_input {
	const struct reconcile *r;	 /* options: owner, clocks, grace, keys, backend */
	const struct node_state *want;	 /* desired */
	const struct observed *have;	 /* observed */
	struct diag *diag;		 /* conflicts found while planning */
	const struct desired_vnet *vnet; /* bridge: the vnet */
	const struct vxlan_port *port;	 /* vxlan, fdb: the device wanted */
	/* bridge, vxlan, fdb: the object's own (owned) link; ifaddr: the fabric device. NULL:
	 * absent */
	const struct link_obs *link;
	const struct link_obs *bridge; /* vxlan: the vnet's bridge if it is kept */
	bool recreated;		       /* fdb: the device is (re)created, so it starts empty */
	bool *made;		       /* vxlan: set when it plans the device's (re)creation */
};

/* The kinds, as op.kind records them. */
enum kind_id {
	KIND_LINK, /* what every link kind shares: removals */
	KIND_BRIDGE,
	KIND_VXLAN,
	KIND_FDB,
	KIND_IFADDR,
	KIND_FABRIC,
	KIND_GUARD,
	KIND_FRR,
	KIND_CARRY,
	KIND_COUNT,
};

struct kind {
	const char *name;
	const char *noun; /* how its ops' objects start: "bridge", "fabric", ... */
	/*
	 * Reads one message of the kind's rtnetlink dump into its table of the
	 * observed state (struct link_table, fdb_table, ifaddr_table): 1 when it
	 * was the kind's object and was added, 0 when not its object, -ENOMEM.
	 * NULL: the kind is not read by an rtnetlink dump (WireGuard: its backend;
	 * the guard: libnftables' JSON; FRR: frr.conf; engine/observe.c reads them).
	 */
	int (*parse)(const struct nlmsghdr *nlh, void *table);
	/* Appends the kind's ops for in to p. 0 or -errno; conflicts go to in->diag. */
	int (*plan)(const struct kind_input *in, struct plan *p);
	/*
	 * Encodes op into e's messages. 0, or -errno (the op failed; e->why may say
	 * why). NULL: its ops are not rtnetlink messages (WireGuard: the backend;
	 * the guard: libnftables; FRR: frr-reload.py, all in engine/).
	 */
	int (*encode)(struct kind_encoder *e, struct op *op);
	/* Writes what op changes, for people, into buf ("" when only op.note says it). */
	void (*describe)(const struct op *op, char *buf, size_t len);
};

/* The kind with that id (enum kind_id); NULL for none. */
const struct kind *kind_by_id(unsigned int id);

extern const struct kind link_kind, bridge_kind, vxlan_kind, fdb_kind, ifaddr_kind, fabric_kind,
    guard_kind, frr_kind, carry_kind;

/*
 * Ends the create message nlh and follows it, in the same send, with the
 * owner mark, no IPv6 link-local address and up (kinds/link.c). The kernel
 * ignores IFLA_IFALIAS when it creates a link, so a fabricd killed in between
 * would otherwise leave an unmarked one. The create asks for a fresh ifindex
 * and the follow-ups address that index, so a create that meets EEXIST
 * (someone took the name after fabricd's read) can never mark the other link.
 * set_mtu (0: none) is set by the mark, after the create: see kinds/bridge.c.
 */
int link_encode_create(struct kind_encoder *e, struct op *op, struct nlmsghdr *nlh,
		       unsigned int set_mtu);
/* Encodes a link op any link kind planned (OP_LINK_CHANGE, OP_LINK_DELETE; kinds/link.c). */
int link_encode(struct kind_encoder *e, struct op *op);
/* An op's link change as the encoders take it (its alias from op.text). */
void link_change_of(const struct op *op, struct link_change *c);

/* Far above what one link message takes; keeps a create and its mark together. */
#define KIND_LINK_MSG_MAX 1024

#endif
