/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guard.h - the nftables guard, table `inet fabricd`: plain VXLAN only
 * from member nodes' underlay addresses, secure VXLAN only through the fabric
 * device from member nodes' fabric addresses, the WireGuard port only from
 * the nodes; everything else to those ports dropped and counted. Replaced
 * atomically in one transaction.
 *
 * What the table holds (kinds/guard_render.c writes it, deterministically):
 *   input  (hook input, priority -10)
 *     plain VXLAN (4789): accepted when (source, VNI) is a (member underlay
 *       address, VNI of one of this node's plain vnets) pair; the VNI is read
 *       from the VXLAN header (@th,96,24). A secure zone's VNI never matches,
 *       so plain VXLAN into a secure zone is dropped whoever sends it.
 *     secure VXLAN (fabric.secure_port): accepted only through the fabric
 *       device (WireGuard has authenticated its sender) from a member of the
 *       vnet's zone: (fabric address, VNI) in fabric_members, for every vnet
 *       of the node (a plain one's standby secure device takes a member's
 *       secure VXLAN when that member switches first).
 *     WireGuard (this node's listen port): accepted from the other nodes'
 *       underlay addresses and endpoint literals.
 *     the rest to those ports: dropped, counted (drop_plain, drop_secure,
 *       drop_wireguard).
 *   output (hook output, priority -10)
 *     plain VXLAN carrying a secure zone's VNI, and secure VXLAN on any
 *       device but the fabric one: dropped, counted (drop_leak).
 *   forward (hook forward, priority -10), with an IPv6 fabric only
 *     anything forwarded into the fabric device: dropped, counted
 *       (drop_forwarded). The fabric carries the nodes' own traffic; a host
 *       that forwards IPv6 passed a guest's packet forged with the node's
 *       fabric address into WireGuard, as the node's (IPv4 drops a forwarded
 *       packet from a local address itself).
 *   EVPN vnets (one device on 4789 in both transports, engine/switch.c):
 *     input also takes their VXLAN through the fabric device from the
 *     members' fabric addresses (fabric_members) and, for secure ones,
 *     underlay addresses (carried_members); a secure one's members are not
 *     in plain_members. On a node with an EVPN vnet, chain carry (route
 *     hook output, mangle) marks the VXLAN of carried_vnis into WireGuard
 *     (kinds/carry.h), and chain postrouting drops it on any other device
 *     (drop_leak).
 *   A vnet that has just switched from plain to secure (engine/switch.c):
 *   while its old plain device is in its grace period
 *   (desired_vnet.plain_receiving), the members' plain VXLAN of that VNI is
 *   still accepted, so nodes that have not switched yet keep reaching it;
 *   the VNI is in secure_vnis, so none of it leaves in clear text. Only the
 *   table loaded before the pass has muted that device (plain_sending) still
 *   lets it out: the sealed table follows once the secure device has taken
 *   over (PHASE_SEAL).
 *
 * The table comment "fabricd:<cluster> <hash>" marks it owned and names the
 * skeleton it came from (the rendering without set elements: chains, rules,
 * set types, counters); together with a summary of the kernel's copy
 * (counters, chains and their rule counts, the sets) and the sets' elements
 * it decides what to do, so a second apply plans nothing. When only set
 * elements differ (a vnet added or removed, a switch's seal, an element
 * someone deleted), the elements are added and deleted in one transaction;
 * anything else replaces the table in one transaction.
 */
#ifndef FABRICD_FIREWALL_H
#define FABRICD_FIREWALL_H

#include <stdbool.h>
#include <stdint.h>

#include "definition/desired.h"
#include "base/diag.h"
#include "engine/plan.h"

#define FIREWALL_FAMILY "inet"
#define FIREWALL_TABLE	"fabricd"

struct reconcile;
struct observed;
struct json_t;

enum firewall_counter_id {
	FW_DROP_PLAIN,	   /* plain VXLAN from a non-member or for a VNI not plain here */
	FW_DROP_SECURE,	   /* secure VXLAN that did not come through the fabric device */
	FW_DROP_WIREGUARD, /* the WireGuard port, from an address no node has */
	FW_DROP_LEAK,	   /* a secure zone's VXLAN stopped on its way out in clear text */
	FW_DROP_FORWARDED, /* a packet forwarded into the fabric device (only a node's own go) */
	FW_N_COUNTERS,
};

extern const char *const firewall_counter_names[FW_N_COUNTERS];

struct firewall_counter {
	uint64_t packets, bytes;
};

/* The sets the table holds; their elements are compared one by one, not hashed. */
enum firewall_set_id {
	FW_SET_PLAIN_MEMBERS,	/* "addr . vni" */
	FW_SET_SECURE_VNIS,	/* "vni" */
	FW_SET_WG_IP,		/* IPv4 addresses */
	FW_SET_WG_IP6,		/* IPv6 addresses */
	FW_SET_CARRIED_VNIS,	/* "vni": EVPN vnets whose VXLAN is marked into WireGuard */
	FW_SET_CARRIED_MEMBERS, /* "addr . vni": their members' underlays, through wgfab0 */
	FW_SET_FABRIC_MEMBERS,	/* "addr . vni": members' fabric addresses, through wgfab0 */
	FW_SET_NODE_VNIS,	/* "vni": this node's vnets; other VXLAN on 4789 is not fabricd's */
	FW_N_SETS,
};

extern const char *const firewall_set_names[FW_N_SETS];

/*
 * One set element: its key as the kernel holds it, by length: 3 a VNI (24 bits,
 * big-endian), 4 IPv4, 16 IPv6, 8 and 20 an address and a VNI (a
 * concatenation: each part padded to 32 bits). Unused bytes are zero.
 */
#define FW_KEY_MAX 20
struct firewall_key {
	uint8_t len;
	uint8_t b[FW_KEY_MAX];
};

/*
 * A set's elements, sorted (memcmp of the whole key), each once; one array of
 * records stride bytes apart, each the key's length and its bytes (zero
 * padded): 9 bytes an element for IPv4 "address . VNI", where a whole struct
 * firewall_key would take 21. The 32,256 members of a 64-node, 1024-vnet
 * guard are 0.3 MiB, in the daemon's kept view and in every pass's wanted
 * table (README, "Scale"). Read an element with elems_get().
 */
struct firewall_elems {
	size_t n, cap;	/* records */
	size_t stride;	/* 1 + the longest key's length; 0 before the first */
	size_t reserve; /* records to make room for at the first element (elems_reserve) */
	uint8_t *rec;
};

/* A rendered table. */
struct firewall_ruleset {
	char *text;    /* "table inet fabricd { ... }", loadable by nft */
	char *summary; /* the observation's summary of the kernel's copy when in sync */
	struct firewall_elems sets[FW_N_SETS];
	/* each set's declared size (0: none; kinds/guard_render.c, firewall_set_size_fresh) */
	uint32_t sizes[FW_N_SETS];
	/* of the text without set elements, counter values and comment: the table's skeleton */
	uint64_t hash;
	char comment[FABRICD_NAME_MAX + 64];
};

/*
 * Renders want's table. carry (NULL: zeros) gives the counters' starting
 * values, so replacing the table keeps the counts. 0 or -ENOMEM.
 */
int firewall_render(const struct node_state *want, const struct firewall_counter *carry,
		    struct firewall_ruleset *out);
/* The same; sealed false: vnets whose plain device may still send keep their plain rules. */
int firewall_render_stage(const struct node_state *want, const struct firewall_counter *carry,
			  bool sealed, struct firewall_ruleset *out);
void firewall_ruleset_free(struct firewall_ruleset *rs);

/* What the kernel has of the table (opaque to the planner). */
struct firewall_obs;

void firewall_obs_free(struct firewall_obs *fw);

/*
 * Building an observation piece by piece (engine/guard_nl.c, from a netlink
 * dump). Each adder returns 0 or -ENOMEM; firewall_obs_finish() makes the
 * summary. An element's key is decoded by its length (3: VNI, 4: IPv4,
 * 8: IPv4 . VNI, 16: IPv6, 20: IPv6 . VNI; anything else in hex).
 */
struct firewall_obs *firewall_obs_new(void);
void firewall_obs_set_comment(struct firewall_obs *fw, const char *comment);
int firewall_obs_add_counter(struct firewall_obs *fw, const char *name, uint64_t packets,
			     uint64_t bytes);
/* A set (or map) and its declared size (0: none); its elements follow with firewall_obs_add_elem().
 */
int firewall_obs_add_set(struct firewall_obs *fw, const char *name, uint32_t size);
/* Whether the set was added; dropping the elements gathered so far (a dump restarts). */
bool firewall_obs_has_set(const struct firewall_obs *fw, enum firewall_set_id id);
void firewall_obs_clear_set(struct firewall_obs *fw, enum firewall_set_id id);
int firewall_obs_add_elem(struct firewall_obs *fw, const char *set, const uint8_t *key, size_t len);
/*
 * A chain; hook NULL for a regular one. verdicts: each rule's verdict in
 * order, space-separated ("accept vmap"; "-" for a rule with none), so a
 * rule replaced in place by one of another verdict is drift like a rule gone.
 */
int firewall_obs_add_chain(struct firewall_obs *fw, const char *name, const char *type,
			   const char *hook, long long prio, const char *policy,
			   const char *verdicts);
/* An object fabricd never makes (a quota, a flowtable, ...): what makes the table differ. */
int firewall_obs_add_other(struct firewall_obs *fw, const char *what);
int firewall_obs_finish(struct firewall_obs *fw);
/* Whether the kernel's table keeps VNI vni's plain VXLAN from leaving (set secure_vnis). */
bool firewall_obs_seals(const struct firewall_obs *fw, uint32_t vni);
/* Whether the kernel's table carries VNI vni's VXLAN into WireGuard (set carried_vnis). */
bool firewall_obs_carries(const struct firewall_obs *fw, uint32_t vni);
/* Whether the table's comment names owner ("fabricd:CLUSTER", the table's mark). */
bool firewall_obs_owned(const struct firewall_obs *fw, const char *owner);
/* A counter's values; false when the kernel's table has no such counter. */
bool firewall_obs_counter(const struct firewall_obs *fw, enum firewall_counter_id id,
			  struct firewall_counter *out);
/*
 * text, a whole table as rendered with counter values (firewall_render*), with
 * each counter at what now's table has counted where that is more: a copy
 * (NULL on ENOMEM). The values rendered were read when the pass was planned.
 */
char *firewall_text_recount(const char *text, const struct firewall_obs *now);

/*
 * A table of that name that is not owner's (another's, or fabricd's under
 * another cluster name): a conflict in diag, naming the way out; false when
 * there is none or it is owner's.
 */
bool firewall_conflict(const struct firewall_obs *fw, const char *owner, struct diag *diag);
/* Plans OP_FIREWALL_SET when the table differs from what want needs (-EEXIST: another's). */
int firewall_plan(const struct node_state *want, const struct firewall_obs *have, struct plan *p);
/* Plans OP_FIREWALL_DELETE when the table exists and is p->owner's (down). */
int firewall_plan_down(const struct firewall_obs *have, struct plan *p);

/* `status`: {"table", "present", "owned", "counters": {name: {packets, bytes}}}. */
struct json_t *firewall_status_json(const struct firewall_obs *fw, const char *owner);

#endif
