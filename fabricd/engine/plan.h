/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/plan.h - the list of changes that takes a node from what the kernel has to
 * what the definition wants. Built by the kinds' diff functions, printed by
 * `plan`, executed by `apply` phase by phase (dependency order), so that a
 * failure in one phase never leaves later ones acting on missing objects.
 */
#ifndef FABRICD_PLAN_H
#define FABRICD_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "base/addr.h"
#include "kinds/link.h"
#include "wireguard/wg.h"

enum op_type {
	OP_WG_CREATE,  /* create (kernel) or start (wireguard-go) the fabric device */
	OP_WG_DESTROY, /* the reverse */
	OP_WG_DEVICE,  /* private key, listen port */
	OP_WG_PEER,    /* add, change or remove one peer */
	OP_BRIDGE_CREATE,
	OP_VXLAN_CREATE,
	OP_LINK_CHANGE,
	OP_LINK_DELETE,
	OP_FDB_ADD,
	OP_FDB_DEL,
	OP_ADDR_ADD,
	OP_ADDR_DEL,
	OP_FIREWALL_SET,    /* replace the `inet fabricd` table in one transaction */
	OP_FIREWALL_DELETE, /* remove it (down) */
	OP_FRR_CONFIG,	    /* fabricd's part of frr.conf: text = new block, NULL = remove */
};

/* Execution order; within a phase, the order of the plan. */
enum op_phase {
	PHASE_DELETE, /* links that go, or must be recreated */
	PHASE_GUARD,  /* the nftables guard, before any secure vnet exists */
	PHASE_LINKS,  /* bridges */
	PHASE_VXLAN,  /* VXLAN devices, enslaved to their bridges */
	/*
	 * The fabric device after the vnets' links: wireguard-go (the userspace
	 * backend) exits when its link-event socket overflows, so a fresh build
	 * makes its thousands of links before it starts (and unpaced).
	 */
	PHASE_WG_CREATE,
	PHASE_FABRIC_LINK, /* link settings of the fabric device */
	PHASE_NEIGH,	   /* FDB remotes and addresses */
	PHASE_WG_CONFIG,   /* keys, port, peers */
	PHASE_FRR,	   /* fabricd's part of FRR's configuration (EVPN), once the fabric is up */
	PHASE_RETIRE,	   /* VXLAN devices of the transport a vnet left: smaller roles, removal */
	PHASE_SEAL,	   /* the guard once they no longer send (engine/switch.c) */
	PHASE_WG_DESTROY,
	PHASE_UNGUARD, /* the guard goes last on down */
	PHASE_COUNT,
};

enum op_verb {
	VERB_CREATE = '+',
	VERB_CHANGE = '~',
	VERB_DELETE = '-',
};

struct op {
	enum op_type type;
	enum op_phase phase;
	enum op_verb verb;
	char object[64];  /* "bridge vnet100", "vxlan vx100", "peer pve2", ... */
	char detail[256]; /* what changes, for people */
	char ifname[16];
	int ifindex; /* of an existing link; 0 = look the name up when applying */
	/* link creation */
	unsigned int mtu;
	uint32_t vni;
	uint16_t port;
	struct ip_addr local;
	char master[16]; /* bridge to enslave a new VXLAN device to */

	/* VXLAN of an EVPN vnet: FRR installs what it would learn */
	bool no_learning;
	/* OP_LINK_CHANGE */
	struct link_change change;
	/* OP_FDB_*: remote; OP_ADDR_*: address */
	struct ip_addr dst;
	struct ip_prefix prefix;
	/* OP_WG_*: one device change with at most one peer and its allowed IP */
	enum wg_backend backend;
	struct wg_device wg;
	struct wg_peer peer;
	struct ip_prefix allowed_ip;
	/* OP_FIREWALL_SET: the table's nft text, owned by the plan (plan_free frees it) */
	char *text;
	/* in plan.later: when it falls due (CLOCK_BOOTTIME s) and how far off that was */
	long long due, due_in;
	bool failed;
};

struct plan {
	size_t n, cap;
	struct op *ops;
	char owner[80]; /* alias marking owned links */
	bool down;	/* removes the node's fabric: no fabric device is expected after it */
	/*
	 * Ops that fall due later (the retire stage of a transport switch): shown
	 * by `plan`, left alone by apply, and the daemon's next wake-up; a pass
	 * after their due time plans them as ordinary ops.
	 */
	size_t n_later, cap_later;
	struct op *later;
};

void plan_init(struct plan *p, const char *owner);
/* Wipes key material. */
void plan_free(struct plan *p);

/* Appends an op; the object name is printf-formatted. NULL on ENOMEM. */
struct op *plan_add(struct plan *p, enum op_type type, enum op_phase phase, enum op_verb verb,
		    const char *object_fmt, ...) __attribute__((format(printf, 5, 6)));
/* Appends an op due at due (CLOCK_BOOTTIME s), due_in seconds from now, to p->later. */
struct op *plan_add_later(struct plan *p, long long due, long long due_in, enum op_type type,
			  enum op_verb verb, const char *object_fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The earliest due time in p->later (CLOCK_BOOTTIME s), 0 when none. */
long long plan_next_due(const struct plan *p);
/* "create", "change" or "remove". */
const char *op_verb_word(enum op_verb v);
/* Appends printf-formatted text to op->detail, comma separated. */
void op_detail(struct op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * One line per change: "+ vxlan vx100: create (vni 100, port 4789, ...)";
 * then the later ones: "later, in 15 s: - vxlan vx100: remove (...)".
 */
void plan_print(const struct plan *p, FILE *f);
void plan_count(const struct plan *p, size_t *created, size_t *changed, size_t *deleted);

#endif
