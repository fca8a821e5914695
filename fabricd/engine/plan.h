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

struct desired_peer;

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
	OP_PREFIX_ROUTE,    /* the fabric address's prefix route, gone while the address stayed */
	OP_FIREWALL_SET,    /* replace the `inet fabricd` table in one transaction */
	OP_FIREWALL_DELETE, /* remove it (down) */
	OP_FRR_CONFIG,	    /* fabricd's part of frr.conf: text = new block, NULL = remove */
	OP_VXLAN_LOCAL,	    /* an EVPN VTEP, or a TTL set by hand, changed live: u.dst the local */
	OP_CARRY_RULE,	    /* the carry's policy rule (kinds/carry.h), add or remove */
	OP_CARRY_ROUTE,	    /* its table's default route through the fabric device */
	OP_CARRY_RP_FILTER, /* the fabric device's IPv4 rp_filter, loose */
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
	/*
	 * A new mute standby on a running node (engine/switch.c): it only
	 * receives, and nobody sends to a vnet's standby before a later switch,
	 * so the sender's flood entries do not wait for it. A build makes it in
	 * PHASE_VXLAN, before wireguard-go starts.
	 */
	PHASE_STANDBY,
	PHASE_WG_CONFIG, /* keys, port, peers */
	PHASE_FRR,	 /* fabricd's part of FRR's configuration (EVPN), once the fabric is up */
	PHASE_RETIRE,	 /* VXLAN devices of the transport a vnet left: smaller roles, removal */
	PHASE_SEAL,	 /* the guard once they no longer send (engine/switch.c) */
	PHASE_WG_DESTROY,
	PHASE_UNGUARD, /* the guard goes last on down */
	PHASE_COUNT,
};

enum op_verb {
	VERB_CREATE = '+',
	VERB_CHANGE = '~',
	VERB_DELETE = '-',
};

/*
 * What an all-zeros FDB entry carries beyond its remote, none of which
 * fabricd gives one (kinds/fdb.h): another VNI than the device's, another
 * UDP port, a device to send through. The kernel dumps only what differs
 * from the device's own.
 */
enum { FDB_HAS_VNI = 1, FDB_HAS_PORT = 2, FDB_HAS_VIA = 4 };
struct fdb_extra {
	uint32_t vni;  /* NDA_VNI */
	uint32_t via;  /* NDA_IFINDEX */
	uint16_t port; /* NDA_PORT, host order */
	uint8_t has;   /* FDB_HAS_*; 0 for what fabricd makes */
};

/*
 * An FDB op's remote; a removed entry's extras too (the kernel finds it by
 * them). mac: all zeros for a flood entry; else a stale MAC entry of zebra's
 * to delete (kinds/fdb.c), with the bridge's entry for it too when master.
 */
struct op_fdb {
	struct ip_addr dst;
	struct fdb_extra x;
	uint8_t mac[6];
	bool master;
};

/*
 * What link ops change, without the alias (that is op.text): a compact
 * struct link_change.
 */
struct op_link {
	uint16_t mask; /* enum link_change_mask */
	bool isolated, learning, flood;
	uint8_t role; /* a VXLAN port's enum vxlan_role, for people */
	unsigned int mtu;
	/* ifindex; 0 with LINK_SET_MASTER: the bridge named below, looked up when applied */
	int master;
	uint32_t group;
	unsigned int old_mtu; /* for people: the MTU it had */
	/* the bridge a VXLAN port goes into (borrowed from the desired state) */
	const char *bridge;
};

/*
 * One change. Compact: the text for people is not stored but produced when
 * it is shown (op_describe: the object from the type and the payload, the
 * detail by the kind that planned the op); what no payload field carries is
 * in note. Payloads borrow from the desired state, the observed state and
 * struct reconcile of the pass that built the plan, which outlive it (one
 * session holds all four). No op holds key material: the WireGuard ops point
 * to the desired peer and the keys stay in struct reconcile.
 */
struct op {
	uint8_t type;	/* enum op_type */
	uint8_t phase;	/* enum op_phase */
	uint8_t verb;	/* enum op_verb */
	uint8_t kind;	/* enum kind_id: the kind that planned it describes and encodes it */
	uint16_t shows; /* the kind's SHOW_* bits (kinds/<kind>.c): what its detail says */
	bool failed;
	/* it failed with ENODEV: its link was not there (maybe deleted while the pass ran) */
	bool no_device;
	bool skipped; /* not tried: an earlier phase failed (plan_apply) */
	/*
	 * The guard's table restored as the definition in force renders it
	 * (gone, or changed by hand): the daemon applies it even while something
	 * else blocks the pass (session_repair_guard).
	 */
	bool guard_repair;
	/* planned for the devices of a vnet whose switch stage ends in this pass (engine/switch.c)
	 */
	bool stage_end;
	int ifindex; /* of an existing link; 0 = look the name up when applying */
	char ifname[16];
	char *note; /* detail text no payload field carries (op_detail), or NULL; owned */
	/*
	 * Owned: OP_FIREWALL_SET's nft text, OP_FRR_CONFIG's block (NULL removes
	 * it), the alias of an OP_LINK_CHANGE with LINK_SET_ALIAS.
	 */
	char *text;
	union {
		struct op_link link; /* OP_LINK_CHANGE */
		struct {	     /* OP_BRIDGE_CREATE, OP_VXLAN_CREATE */
			unsigned int mtu;
			uint32_t vni;
			uint16_t port;
			uint8_t role; /* enum vxlan_role */
			/* VXLAN of an EVPN vnet: FRR installs what it would learn */
			bool no_learning;
			struct ip_addr local;
			const char *bridge; /* to enslave a new VXLAN device to (borrowed) */
		} create;
		/* OP_LINK_DELETE, for people: the link's kind ("" = "link") and name
		 * (ifname is set only where the daemon's reports look it up) */
		struct {
			char kind[16];
			char name[16];
		} del;
		struct ip_addr dst; /* OP_VXLAN_LOCAL: the new local */
		struct op_fdb fdb;  /* OP_FDB_*: the remote, and a removed one's extras */
		struct ip_prefix
		    prefix; /* OP_ADDR_*, OP_PREFIX_ROUTE: the address and its length */
		/* OP_WG_DEVICE: WGDEVICE_HAS_PRIVATE_KEY (struct reconcile's key), _LISTEN_PORT */
		struct {
			unsigned int flags;
			uint16_t listen_port;
		} dev;
		struct {				 /* OP_WG_PEER */
			const struct desired_peer *want; /* NULL: removed */
			const struct wg_peer *have;	 /* the kernel's, NULL: new */
			const char *name;		 /* its node's, NULL: a peer no node has */
			const uint8_t *psk;		 /* the key to set (HAS_PRESHARED_KEY) */
			unsigned int flags;		 /* WGPEER_* */
		} peer;
		enum wg_backend backend; /* OP_WG_CREATE, OP_WG_DESTROY */
		int family;		 /* OP_CARRY_RULE, OP_CARRY_ROUTE: AF_INET or AF_INET6 */
	} u;
	/* in plan.later: when it falls due (CLOCK_BOOTTIME s) and how far off that was */
	long long due, due_in;
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
void plan_free(struct plan *p);

/* Appends an op planned by kind (enum kind_id), zeroed but for these. NULL on ENOMEM. */
struct op *plan_add(struct plan *p, int kind, enum op_type type, enum op_phase phase,
		    enum op_verb verb, const char *ifname);
/* Appends an op due at due (CLOCK_BOOTTIME s), due_in seconds from now, to p->later. */
struct op *plan_add_later(struct plan *p, long long due, long long due_in, int kind,
			  enum op_type type, enum op_verb verb, const char *ifname);
/* The earliest due time in p->later (CLOCK_BOOTTIME s), 0 when none. */
long long plan_next_due(const struct plan *p);
/* Names an OP_LINK_DELETE's link for people: its kind ("" or NULL: "link") and name. */
void op_delete_names(struct op *op, const char *kind, const char *name);
/* "create", "change" or "remove". */
const char *op_verb_word(enum op_verb v);
/* Appends printf-formatted text to op->note, comma separated (at most OP_DETAIL_MAX - 1 bytes). */
void op_detail(struct op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends printf-formatted text to buf (len bytes), comma separated, as op_detail does. */
void text_add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define OP_OBJECT_MAX 64
#define OP_DETAIL_MAX 512

/* An op's text for people: "vxlan vx100", "vni 100, port 4789, ...". */
struct op_text {
	char object[OP_OBJECT_MAX];
	char detail[OP_DETAIL_MAX];
};
void op_describe(const struct op *op, struct op_text *t);

/*
 * One line per change: "+ vxlan vx100: create (vni 100, port 4789, ...)";
 * then the later ones: "later, in 15 s: - vxlan vx100: remove (...)".
 */
void plan_print(const struct plan *p, FILE *f);
void plan_count(const struct plan *p, size_t *created, size_t *changed, size_t *deleted);
/* Warns of the vnet bridges whose MTU the plan lowers: their guests must follow (apply). */
void plan_warn_lowered_mtus(const struct plan *p, const char *node);

#endif
