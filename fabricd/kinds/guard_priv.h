/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guard_priv.h - helpers shared by kinds/guard.c (kernel side) and
 * kinds/guard_render.c (text side): a growing string, a list of strings and the
 * summary format both sides produce ("counter NAME", "set NAME",
 * "chain NAME: TYPE HOOK PRIO POLICY, rules: VERDICT(MARK) ...", "other WHAT", one per line,
 * sorted; the sets' elements are kept apart, as keys in struct firewall_elems).
 */
#ifndef FABRICD_FIREWALL_PRIV_H
#define FABRICD_FIREWALL_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "kinds/guard.h"

#define TABLE_NAME FIREWALL_FAMILY " " FIREWALL_TABLE
#define OBJECT	   "nftables table " TABLE_NAME

struct sbuf {
	char *buf;
	size_t len, cap;
	bool failed;
};

struct strlist {
	size_t n, cap;
	char **v;
};

void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string (caller frees; "" when nothing was written), NULL after ENOMEM. Resets b. */
char *sbuf_take(struct sbuf *b);

/* Appends a copy. 0 or -ENOMEM. */
int strlist_add(struct strlist *l, const char *s);
/* Sorts (strcmp) and drops duplicates. */
void strlist_sort(struct strlist *l);
void strlist_free(struct strlist *l);

/* Set elements: appended (0 or -ENOMEM), sorted and made unique, compared, freed. */
int elems_add(struct firewall_elems *l, const struct firewall_key *k);
/* Element i (< l->n) into out. */
void elems_get(const struct firewall_elems *l, size_t i, struct firewall_key *out);
/* Element i against k, in the sets' order (key_cmp). */
int elems_cmp(const struct firewall_elems *l, size_t i, const struct firewall_key *k);
/* Room for n elements in all (a set's size known ahead: no doubling). 0 or -ENOMEM. */
int elems_reserve(struct firewall_elems *l, size_t n);
void elems_sort(struct firewall_elems *l);
bool elems_equal(const struct firewall_elems *a, const struct firewall_elems *b);
int key_cmp(const struct firewall_key *a, const struct firewall_key *b);
void elems_free(struct firewall_elems *l);
/* The element as nft writes it ("addr", "vni", "addr . vni"; other keys in hex). */
void key_text(const struct firewall_key *k, char *out, size_t len);
/* An address, a VNI, or "addr . vni" as a key. 0 or -EINVAL. */
int key_parse(const char *text, struct firewall_key *k);
/* The key of addr (NULL: none) and vni (< 0: none). */
void key_make(struct firewall_key *k, const struct ip_addr *addr, long long vni);
/* The set's index by name, FW_N_SETS when fabricd makes no such set. */
enum firewall_set_id firewall_set_by_name(const char *name);
/* Starts an op's text that changes set elements only (engine/guard_io.c runs it as it is). */
#define FIREWALL_DELTA_MARK "# inet fabricd: set elements only\n"

/*
 * How engine/guard_io.c loads a table that does not exist yet: out gets the
 * commands in order. With more than chunk elements in plain_members or
 * fabric_members, the first is the table with such sets empty and the rest
 * add their elements, chunk at a time ("add element ..."), so that
 * libnftables never holds them all at once; otherwise the one command is
 * text. Both let VXLAN in: while they are partly loaded the table is stricter
 * than the whole, never laxer (the deny-list secure_vnis is in the first
 * command). 0 or -ENOMEM.
 */
int firewall_load_steps(const char *text, size_t chunk, struct strlist *out);

/* firewall_render_stage() without the text (what planning compares). 0 or -ENOMEM. */
int firewall_render_summary(const struct node_state *want, bool sealed,
			    struct firewall_ruleset *out);
/*
 * The same with each set's declared size given (sizes: FW_N_SETS of them),
 * where the two above choose firewall_set_size_fresh() of its elements; the
 * text only when with_text. 0 or -ENOMEM.
 */
int firewall_render_sized(const struct node_state *want, const struct firewall_counter *carry,
			  bool sealed, const uint32_t *sizes, bool with_text,
			  struct firewall_ruleset *out);

/*
 * A set of at least FW_SIZED_MIN elements is declared with a size, so that
 * the kernel keeps it in its hash of fixed size (nft_hash), whose dump
 * costs one pass: the resizable one (nft_rhash) starts its walk again from
 * the first element for every 32 KiB message of a dump, quadratic in the
 * elements (a no-op plan of 64 nodes x 1024 vnets, 2 x 32,256 elements,
 * spent half its CPU there; README "Scale"). A fixed size cannot grow: a
 * set needing more is declared anew, the table replaced in one transaction.
 */
#define FW_SIZED_MIN 1024
/* The size a new set of n elements gets: 0 under FW_SIZED_MIN, else 2-4 times n. */
uint32_t firewall_set_size_fresh(size_t n);
/*
 * The size to declare for want where the kernel's set is have, declared
 * with have_size: have_size while it holds have and what want adds (a
 * delta adds before it deletes) and is not 8 times more than want needs;
 * else firewall_set_size_fresh(want->n).
 */
uint32_t firewall_set_size_keep(const struct firewall_elems *want,
				const struct firewall_elems *have, uint32_t have_size);

/* What the chains depend on (kinds/guard_chains.c). */
struct firewall_chain_params {
	const char *fabric_if;
	int underlay_family, fabric_family;
	unsigned secure_port, listen_port;
	bool carry; /* an EVPN vnet is here: the chains that carry its VXLAN */
	/* this family's WireGuard from any address: the node's endpoint is of it, the
	 * underlay not, so its peers come from addresses no definition has (0: none) */
	int wg_any_family;
};

/* Every rule's comment: this, then 6 hex digits of its text's hash. */
#define FIREWALL_RULE_MARK	"fabricd "
#define FIREWALL_RULE_MARK_MASK 0xffffffu

/*
 * The chains as nft text appended to b, each rule with its comment; with
 * summary, each chain's summary line added to it ("chain NAME: TYPE HOOK PRIO
 * POLICY, rules: VERDICT(MARK) ..."). 0 or -ENOMEM.
 */
int firewall_render_chains(struct sbuf *b, const struct firewall_chain_params *p,
			   struct strlist *summary);

/* The lines sorted, each ending in "\n"; NULL on ENOMEM. */
char *summary_join(struct strlist *lines);

#endif
